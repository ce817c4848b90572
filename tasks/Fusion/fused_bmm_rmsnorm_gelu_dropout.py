"""Batched matrix product, RMS normalization of its rows, GELU, then dropout; judged statistically."""

import torch

from evaluator.contracts import Statistical
from evaluator.randomness import dropout_checks
from evaluator.task import Allowance, Cost, Inputs, Task, element_bytes, generator, pick, randn


def _shape(normalized_shape):
    # an int means a 1-element shape, as torch.nn.RMSNorm takes it
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


def reference(input1, input2, normalized_shape, dropout_p=0.1, eps=1e-5, training=True, approximate="none", *,
              out=None):
    z = torch.bmm(input1, input2)
    normalized = torch.nn.functional.rms_norm(z, _shape(normalized_shape), eps=eps)
    g = torch.nn.functional.gelu(normalized, approximate=approximate)
    result = torch.nn.functional.dropout(g, p=dropout_p, training=training)
    if out is not None:
        out.copy_(result)
        return out
    return result


# Per size, the cases seeds rotate through: (B, N, M, P), normalized_shape as int/list/tuple,
# dropout_p, training, approximate, eps. Dropout on and off, p = 0 with training (nothing may be
# dropped). The standard size has one configuration.
CASES = {
    "small": [((3, 48, 64, 40), "int", 0.1, True, "none", 1e-5), ((2, 33, 80, 72), "list", 0.3, False, "tanh", 1e-3)],
    "edge": [((5, 1, 67, 33), "tuple", 0.0, True, "tanh", 1e-5), ((1, 37, 3, 300), "int", 0.5, True, "none", 1e-5)],
    "standard": [((16, 4096, 1024, 512), "int", 0.1, True, "none", 1e-5)],     # ~69 GFLOP
}

# A kept element must match the float64 value within EPS * (|value| + rms): room for TF32 products
# (float32) and for rounding the result to a half-precision dtype.
EPS = {torch.float32: 8e-3, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    (b, n, m, p_cols), shape_kind, p, training, approximate, eps = cases[seed % len(cases)]
    x1 = randn((b, n, m), gen, dtype, mode)
    x2 = randn((b, m, p_cols), gen, dtype, mode, scale=1.0 / m ** 0.5)
    normalized_shape = {"int": p_cols, "list": [p_cols], "tuple": (p_cols,)}[shape_kind]
    return Inputs((x1, x2, normalized_shape), {"dropout_p": p, "eps": eps, "training": training,
                                               "approximate": approximate})


def kept_values(x1, x2, normalized_shape, kw, p, device):
    z = torch.bmm(x1.to(device, torch.float64), x2.to(device, torch.float64))
    normalized = torch.nn.functional.rms_norm(z, _shape(normalized_shape), eps=kw.get("eps", 1e-5))
    return torch.nn.functional.gelu(normalized, approximate=kw.get("approximate", "none")) / (1.0 - p)


def check(inputs, runs):
    x1, x2, normalized_shape = inputs.args
    kw = inputs.kwargs
    p = kw.get("dropout_p", 0.1) if kw.get("training", True) else 0.0
    for i, run in enumerate(runs):
        if not isinstance(run, torch.Tensor) or run.dtype != x1.dtype:
            return [f"call {i + 1}: expected a {x1.dtype} tensor"]
    kept = kept_values(x1, x2, normalized_shape, kw, p, runs[0].device)
    return dropout_checks(runs, kept, p, EPS[x1.dtype])


def cost(inputs):
    x1, x2, _ = inputs.args
    b, n, m = x1.shape
    p_cols = x2.shape[-1]
    return Cost(flops=2 * b * n * m * p_cols + 16 * b * n * p_cols,
                bytes=element_bytes(x1, x2) + b * n * p_cols * x1.element_size())


TASK = Task(
    id="Fusion/fused_bmm_rmsnorm_gelu_dropout",
    difficulty=3,
    entry="fused_bmm_rmsnorm_gelu_dropout",
    signature=("fused_bmm_rmsnorm_gelu_dropout(input1, input2, normalized_shape, dropout_p=0.1, eps=1e-5, "
               "training=True, approximate='none', *, out=None)"),
    description=(
        "Compute z = input1 @ input2 for batches of matrices, `input1` (B, N, M) and `input2` (B, M, P), "
        "accumulating in float32 (TF32 is accepted for float32 inputs). RMS-normalize every row of z over its "
        "last dimension, r = z / sqrt(mean(z**2) + eps), without a learned scale (`normalized_shape` is P, as an "
        "int or a 1-element list or tuple). Apply GELU to r, exact (approximate='none') or tanh-approximated "
        "(approximate='tanh'), then dropout: when training is True each element is zeroed with probability "
        "dropout_p (0 <= p < 1) and otherwise divided by (1 - p); when False nothing changes. Return a new "
        "(B, N, P) tensor in the inputs' dtype. Each call must draw a fresh mask (take a seed on the host with "
        "torch.randint(0, 2**31 - 1, (1,)).item() and draw in the kernel, e.g. with tl.rand(seed, offsets)); "
        "the result is judged statistically: elements are 0 or the scaled value, zeros fit p, and the mask is "
        "independent between elements, rows and calls."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Statistical(check=check),
    allowed=(Allowance(api="torch.randint", aten=("randint",),
                       why="draw a fresh seed on the host for the dropout mask's random stream"),),
)
