"""Matrix product, softmax, dropout, a second product, residual add and layer normalization; judged
statistically by recovering the dropout stage from the normalized output."""

import torch

from evaluator.contracts import Statistical
from evaluator.randomness import dropout_checks
from evaluator.task import Allowance, Cost, Inputs, Task, element_bytes, generator, pick, randn


def _probabilities(input, weight1):
    return torch.nn.functional.softmax(input @ weight1, dim=-1)


def _block_output(dropped, weight2, residual, eps):
    z4 = dropped @ weight2
    return torch.nn.functional.layer_norm(z4 + residual, normalized_shape=(z4.size(-1),), eps=eps)


def reference(input, weight1, weight2, residual, dropout_p=0.1, eps=1e-5, *, out=None):
    dropped = torch.nn.functional.dropout(_probabilities(input, weight1), p=dropout_p, training=True)
    result = _block_output(dropped, weight2, residual, eps)
    if out is not None:
        out.copy_(result)
        return out
    return result


# Per (size, seed): (input shape, D_k, D_out, residual shape, dropout_p, eps). D_out >= D_k + 2 always
# (see `check`); eps large enough to matter in some cases. The standard size has one configuration.
CASES = {
    "small": [((2, 24, 32), 48, 96, (2, 24, 96), 0.5, 1e-5), ((40, 64), 32, 80, (80,), 0.2, 0.05)],
    "edge": [((1, 7, 5), 3, 9, (7, 9), 0.0, 1e-5), ((3, 33, 17), 19, 37, (3, 1, 37), 0.3, 1e-3)],
    "standard": [((8, 4096, 1024), 512, 1024, (8, 4096, 1024), 0.1, 1e-5)],     # ~69 GFLOP
}

# Recovered dropout outputs must lie within EPS_Z * (|kept| + rms(row of kept)) + 4 * (torch's own error
# on the probabilities in the evaluated dtype) of 0 or of kept = probability / (1 - p); the output must
# then match the block recomputed with the recovered mask within EPS_Y * (|y| + rms(y)) + 4 * (torch's own
# error on that recomputation) + 2 * (its rms over the row). Room for TF32 products (float32) and
# half-precision intermediates. For float32, torch's own error is that of TF32 products (`_tf32`).
EPS_Z = {torch.float32: 5e-3, torch.float16: 4e-3, torch.bfloat16: 2e-2}
EPS_Y = {torch.float32: 4e-3, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def _tf32(t):
    """float32 operands of a product as TF32 tensor cores take them (the 13 low mantissa bits dropped,
    rounding toward zero as Hopper's do): torch's own error with these is the error TF32 products
    bring, which a row with one dominant probability carries into every output of the row."""
    return (t.view(torch.int32) & -(1 << 13)).view(torch.float32) if t.dtype == torch.float32 else t


def _orthogonal_rows(rows, cols, gen):
    """(rows, cols) with orthogonal rows of norm sqrt(cols) (entries of about unit size), rows < cols:
    distinct non-constant cosine (DCT-II) basis vectors with a random sign per column."""
    freq = (torch.randperm(cols - 1, generator=gen)[:rows] + 1).to(torch.float64)
    j = torch.arange(cols, dtype=torch.float64) + 0.5
    signs = torch.randint(0, 2, (cols,), generator=gen).to(torch.float64) * 2 - 1
    basis = torch.cos(torch.pi * freq[:, None] * j[None, :] / cols) * 2 ** 0.5
    return (basis * signs[None, :]).to(torch.float32)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, d_k, d_out, residual_shape, p, eps = cases[seed % len(cases)]
    d_in = shape[-1]
    x = randn(shape, gen, dtype, mode)
    w1 = randn((d_in, d_k), gen, dtype, mode, scale=1.5 / d_in ** 0.5)
    # weight2 has orthogonal rows and the residual is generic (neither gets outliers), so the dropout
    # output can be recovered from the normalized result
    w2 = _orthogonal_rows(d_k, d_out, gen).to(dtype)
    residual = randn(residual_shape, gen, dtype, "standard", scale=0.5)
    return Inputs((x, w1, w2, residual), {"dropout_p": p, "eps": eps})


class _Recovery:
    """Per row, the (D_k) vector D with y = LayerNorm(D @ w2 + residual) up to the row's scale and shift:
    solves a * y + b - residual = D @ w2 by least squares (float64)."""

    def __init__(self, w2, residual):
        self.w2 = w2
        self.residual = residual
        self.gram_inv = torch.linalg.inv(w2 @ w2.T)
        self.ones_out = self.outside(torch.ones(w2.shape[-1], dtype=w2.dtype, device=w2.device))
        self.residual_out = self.outside(residual)

    def outside(self, v):  # the part of v orthogonal to the rows of w2
        return v - ((v @ self.w2.T) @ self.gram_inv) @ self.w2

    def __call__(self, y):
        yp, onep, rp = self.outside(y), self.ones_out, self.residual_out
        a11 = (yp * yp).sum(-1, keepdim=True)
        a12 = (yp * onep).sum(-1, keepdim=True)
        a22 = (onep * onep).sum()
        c1 = (yp * rp).sum(-1, keepdim=True)
        c2 = (onep * rp).sum(-1, keepdim=True)
        det = a11 * a22 - a12 * a12
        a = (c1 * a22 - c2 * a12) / det
        b = (a11 * c2 - a12 * c1) / det
        return ((a * y + b - self.residual) @ self.w2.T) @ self.gram_inv


def check(inputs, runs):
    x, w1, w2, residual = inputs.args
    p = inputs.kwargs.get("dropout_p", 0.1)
    eps = inputs.kwargs.get("eps", 1e-5)
    dtype = x.dtype
    out_shape = tuple(x.shape[:-1]) + (w2.shape[-1],)
    for i, run in enumerate(runs):
        if not isinstance(run, torch.Tensor) or run.dtype != dtype or tuple(run.shape) != out_shape:
            return [f"call {i + 1}: expected a {str(dtype).removeprefix('torch.')} tensor of shape {out_shape}"]
        if not bool(torch.isfinite(run).all()):
            return [f"call {i + 1}: the output holds NaN or Inf"]
    device = runs[0].device
    x, w1, w2, residual = (t.to(device) for t in (x, w1, w2, residual))
    x64, w1_64, w2_64 = x.double(), w1.double(), w2.double()
    r64 = residual.double().expand(out_shape)
    probs_lo = _probabilities(_tf32(x), _tf32(w1))
    kept = _probabilities(x64, w1_64) / (1.0 - p)
    row_rms = kept.square().mean(dim=-1, keepdim=True).sqrt()
    bound = EPS_Z[dtype] * (kept.abs() + row_rms) + 4 * (probs_lo.double() / (1.0 - p) - kept).abs()
    # values too close to 0 to tell a drop from a keep after recovery count as 0 and as uninformative
    ambiguous = kept.abs() <= 2 * bound
    kept_ref = torch.where(ambiguous, torch.zeros_like(kept), kept)
    recover = _Recovery(w2_64, r64)
    failures, classified = [], []
    for i, run in enumerate(runs):
        y = run.double()
        d = recover(y)
        if not bool(torch.isfinite(d).all()):
            failures.append(f"call {i + 1}: the output is not a layer normalization of D @ weight2 + residual")
            continue
        keep = (d - kept).abs() < d.abs()
        # the block recomputed with this call's mask, in float64 and (for the bound) in the evaluated dtype
        y_hi = _block_output(kept * keep, w2_64, r64, eps)
        dropped_lo = probs_lo * keep.to(dtype) * (1.0 / (1.0 - p)) if p < 1 else probs_lo * 0
        y_lo = _block_output(_tf32(dropped_lo), _tf32(w2), residual, eps).double()
        # torch's own error, element by element and as its row rms (half-precision intermediates round
        # differently from element to element, so a locally small error of torch's is no tighter limit)
        lo_err = (y_lo - y_hi).abs()
        y_bound = (EPS_Y[dtype] * (y_hi.abs() + y_hi.square().mean().sqrt()) + 4 * lo_err
                   + 2 * lo_err.square().mean(dim=-1, keepdim=True).sqrt())
        off = ~((y - y_hi).abs() <= y_bound)
        if bool(off.any()):
            j = int(torch.nonzero(off.reshape(-1))[0])
            failures.append(f"call {i + 1}: {int(off.sum())} of {off.numel()} outputs differ from the block "
                            f"recomputed with the dropout mask recovered from them (first at flat index {j}: "
                            f"expected {float(y_hi.reshape(-1)[j]):.6g}, got {float(y.reshape(-1)[j]):.6g})")
        # each recovered element is classified as dropped (0), kept (exactly the expected value), or left
        # as it is (wrong); dropout_checks then judges the values, the share of zeros and the masks
        near_zero = d.abs() <= bound
        near_kept = (d - kept).abs() <= bound
        value = torch.where(near_zero & ~(near_kept & keep), torch.zeros_like(d),
                            torch.where(near_kept, kept, d))
        classified.append(torch.where(ambiguous & (near_zero | near_kept), torch.zeros_like(d), value))
    if failures:
        return failures
    return dropout_checks(classified, kept_ref, p, 1e-9, what="dropout output recovered from the result")


def cost(inputs):
    x, w1, w2, residual = inputs.args
    d_in, d_k = w1.shape
    d_out = w2.shape[-1]
    rows = x.numel() // d_in
    return Cost(flops=2 * rows * d_k * (d_in + d_out) + 6 * rows * d_k + 8 * rows * d_out,
                bytes=element_bytes(x, w1, w2, residual) + rows * d_out * x.element_size())


TASK = Task(
    id="Fusion/fused_transformer_block",
    difficulty=3,
    entry="fused_transformer_block",
    signature="fused_transformer_block(input, weight1, weight2, residual, dropout_p=0.1, eps=1e-5, *, out=None)",
    description=(
        "`input` is (N, D_in) or (B, N, D_in), `weight1` (D_in, D_k), `weight2` (D_k, D_out), and `residual` "
        "broadcasts to the result's shape (..., N, D_out). Compute P = softmax(input @ weight1) over the last "
        "dim, D = dropout(P) (always active: each element zeroed independently with probability dropout_p, "
        "0 <= p < 1, the rest divided by 1 - p), then return LayerNorm(D @ weight2 + residual) over the last "
        "dim without affine parameters: (v - mean) / sqrt(biased var + eps), as a new tensor in the input's "
        "dtype (float32 accumulation; TF32 accepted for float32). Draw a fresh seed per call with "
        "torch.randint(0, 2**31 - 1, (1,)).item() for an in-kernel mask (e.g. tl.rand). Judged statistically: "
        "the test's weight2 has orthogonal rows, so D is recovered from the result and each element must be 0 "
        "or P / (1 - p), the zero share must fit p, the mask must be independent between elements, rows and "
        "calls, and the result "
        "must match the block recomputed with the recovered mask."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Statistical(check=check),
    allowed=(Allowance(api="torch.randint", aten=("randint",),
                       why="draw a fresh seed on the host for the dropout mask's random stream"),),
)
