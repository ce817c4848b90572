"""Elementwise product plus an offset, log-softmax, dropout, then a batched matrix product; judged
statistically by recovering the dropout stage's output from the product."""

import torch

from evaluator.contracts import Statistical
from evaluator.randomness import dropout_checks
from evaluator.task import Allowance, Cost, Inputs, Task, element_bytes, generator, pick, randn


def _log_softmax(input1, input2, other, dim):
    return torch.nn.functional.log_softmax(torch.add(torch.mul(input1, input2), other), dim=dim)


def reference(input1, input2, other, mat2, p=0.5, training=True, inplace=False, dim=-1, *, out=None):
    d = torch.nn.functional.dropout(_log_softmax(input1, input2, other, dim), p=p, training=training,
                                    inplace=inplace)
    y = torch.bmm(d, mat2)
    if out is not None:
        out.copy_(y)
        return out
    return y


# Per size, the cases seeds rotate through: (B, N, D_in, D_out), other (a shape, or a Python number),
# p, training, dim. D_out >= D_in always (see `check`). The standard size has one configuration.
CASES = {
    "small": [((2, 24, 32, 48), (32,), 0.5, True, -1), ((3, 20, 16, 16), 0.5, 0.3, True, 1)],
    "edge": [((1, 5, 3, 3), (1, 1, 1), 0.2, True, -1), ((3, 7, 17, 19), (3, 7, 17), 0.0, False, 2)],
    "standard": [((32, 1024, 1024, 1024), (1024,), 0.1, True, -1)],     # ~69 GFLOP
}

# Recovered dropout outputs must lie within BOUND * (|kept| + rms(row of kept)) of 0 or of kept, the
# undropped value / (1 - p): room for TF32 products (float32) and for the rounding of the dropout output
# and of the product to a half-precision dtype.
BOUND = {torch.float32: 5e-3, torch.float16: 4e-3, torch.bfloat16: 2e-2}


def _orthonormal_rows(b, rows, cols, gen):
    """(b, rows, cols) matrices with orthonormal rows (rows <= cols), from the QR of Gaussian matrices."""
    g = torch.randn((b, cols, rows), generator=gen, dtype=torch.float64)
    q, _ = torch.linalg.qr(g)
    return q.transpose(1, 2).to(torch.float32)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    (b, n, d_in, d_out), other, p, training, dim = cases[seed % len(cases)]
    x1 = randn((b, n, d_in), gen, dtype, mode)
    x2 = randn((b, n, d_in), gen, dtype, mode, scale=1.5)
    if isinstance(other, tuple):
        other = randn(other, gen, dtype, mode, scale=0.5)
    # mat2 has orthonormal rows, so the dropout output D is recoverable from D @ mat2 (no outliers here)
    mat2 = _orthonormal_rows(b, d_in, d_out, gen).to(dtype)
    return Inputs((x1, x2, other, mat2), {"p": p, "training": training, "inplace": False, "dim": dim})


def check(inputs, runs):
    x1, x2, other, mat2 = inputs.args
    kw = inputs.kwargs
    p = kw.get("p", 0.5) if kw.get("training", True) else 0.0
    b, n, d_in = x1.shape
    shape = (b, n, mat2.shape[-1])
    for i, run in enumerate(runs):
        if not isinstance(run, torch.Tensor) or run.dtype != x1.dtype or tuple(run.shape) != shape:
            return [f"call {i + 1}: expected a {str(x1.dtype).removeprefix('torch.')} tensor of shape {shape}"]
    device = runs[0].device
    wide = [t.to(device, torch.float64) if isinstance(t, torch.Tensor) else t for t in (x1, x2, other, mat2)]
    kept = _log_softmax(wide[0], wide[1], wide[2], kw.get("dim", -1)) / (1.0 - p)
    m = wide[3]
    gram = m @ m.transpose(1, 2)
    row_rms = kept.square().mean(dim=-1, keepdim=True).sqrt()
    bound = BOUND[x1.dtype] * (kept.abs() + row_rms)
    # values too close to 0 to tell a drop from a keep after recovery count as 0 and as uninformative
    ambiguous = kept.abs() <= 2 * bound
    kept_ref = torch.where(ambiguous, torch.zeros_like(kept), kept)
    failures, classified = [], []
    for i, run in enumerate(runs):
        y = run.to(torch.float64)
        # least-squares recovery of the dropout output D from Y = D @ mat2 (mat2 has full row rank)
        d = torch.linalg.solve(gram, m @ y.transpose(1, 2)).transpose(1, 2)
        residual = float((y - d @ m).norm())
        if residual > BOUND[x1.dtype] * float(y.norm()) + 1e-12:
            failures.append(f"call {i + 1}: the output is not of the form D @ mat2 (relative residual "
                            f"{residual / max(float(y.norm()), 1e-300):.3g})")
        # each recovered element is classified as dropped (0), kept (exactly the expected value), or left
        # as it is (wrong); dropout_checks then judges the values, the share of zeros and the masks
        near_zero = d.abs() <= bound
        near_kept = (d - kept).abs() <= bound
        value = torch.where(near_zero, torch.zeros_like(d), torch.where(near_kept, kept, d))
        classified.append(torch.where(ambiguous & (near_zero | near_kept), torch.zeros_like(d), value))
    return failures + dropout_checks(classified, kept_ref, p, 1e-9,
                                     what="dropout output recovered from the product")


def cost(inputs):
    x1, x2, other, mat2 = inputs.args
    b, n, d_in = x1.shape
    d_out = mat2.shape[-1]
    return Cost(flops=2 * b * n * d_in * d_out + 8 * b * n * d_in,
                bytes=element_bytes(x1, x2, other, mat2) + b * n * d_out * x1.element_size())


TASK = Task(
    id="Fusion/fused_mul_add_logsoftmax_dropout_bmm",
    difficulty=3,
    entry="fused_mul_add_logsoftmax_dropout_bmm",
    signature=("fused_mul_add_logsoftmax_dropout_bmm(input1, input2, other, mat2, p=0.5, training=True, "
               "inplace=False, dim=-1, *, out=None)"),
    description=(
        "`input1` and `input2` are (B, N, D_in); `other` is a Python number or a tensor broadcastable to "
        "(B, N, D_in); `mat2` is (B, D_in, D_out). Compute S = input1 * input2 + other, L = log_softmax(S) along "
        "dimension `dim` (0, 1 or 2, negative allowed), then D = dropout(L): with training=True each element is "
        "zeroed independently with probability p (0 <= p < 1) and the kept ones are divided by (1 - p); with "
        "training=False D = L. Return Y = D @ mat2 per batch, a new (B, N, D_out) tensor in the inputs' dtype "
        "(float32 accumulation; TF32 accepted for float32). Draw a fresh seed per call with "
        "torch.randint(0, 2**31 - 1, (1,)).item() for an in-kernel mask (e.g. tl.rand). Judged statistically: "
        "the test's mat2 has orthonormal rows, so D is recovered from Y by least squares and each element must "
        "be 0 or L / (1 - p), the share of zeros must fit p, and the mask must be independent between elements, "
        "rows and calls."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Statistical(check=check),
    allowed=(Allowance(api="torch.randint", aten=("randint",),
                       why="draw a fresh seed on the host for the dropout mask's random stream"),),
)
