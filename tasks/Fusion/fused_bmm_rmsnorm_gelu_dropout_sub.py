"""Batched matrix product, RMS normalization, GELU, dropout, then subtraction of a tensor; judged statistically."""

import torch

from evaluator.contracts import Statistical
from evaluator.randomness import dropout_checks
from evaluator.task import Allowance, Cost, Inputs, Task, element_bytes, generator, pick, randn


def _shape(normalized_shape):
    # an int means a 1-element shape, as torch.nn.RMSNorm takes it
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


def reference(input1, input2, other, normalized_shape, dropout_p=0.5, training=True, approximate="none", eps=1e-5,
              *, out=None):
    z = torch.bmm(input1, input2)
    normalized = torch.nn.functional.rms_norm(z, _shape(normalized_shape), eps=eps)
    g = torch.nn.functional.gelu(normalized, approximate=approximate)
    d = torch.nn.functional.dropout(g, p=dropout_p, training=training)
    result = torch.sub(d, other)
    if out is not None:
        out.copy_(result)
        return out
    return result


# Per size, the cases seeds rotate through: (B, N, M, P), the shape of `other` (broadcast to
# (B, N, P)), normalized_shape as int/list/tuple, dropout_p, training, approximate, eps. Dropout on
# and off, p = 0 with training (nothing may be dropped). The standard size has one configuration.
CASES = {
    "small": [((3, 48, 64, 40), (3, 48, 40), "int", 0.5, True, "none", 1e-5),
              ((2, 33, 80, 72), (72,), "list", 0.2, False, "tanh", 1e-3)],
    "edge": [((5, 1, 67, 33), (5, 1, 1), "tuple", 0.0, True, "tanh", 1e-5),
             ((1, 37, 3, 300), (37, 1), "int", 0.3, True, "none", 1e-5)],
    "standard": [((16, 4096, 1024, 512), (16, 4096, 512), "int", 0.5, True, "none", 1e-5)],     # ~69 GFLOP
}

# A kept element must match the float64 value within EPS * (|value| + rms): room for TF32 products
# (float32) and for rounding the difference with `other` to a half-precision dtype.
EPS = {torch.float32: 8e-3, torch.float16: 4e-3, torch.bfloat16: 3e-2}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    (b, n, m, p_cols), other_shape, shape_kind, p, training, approximate, eps = cases[seed % len(cases)]
    x1 = randn((b, n, m), gen, dtype, mode)
    x2 = randn((b, m, p_cols), gen, dtype, mode, scale=1.0 / m ** 0.5)
    # `other` stays free of outliers: the check adds it back to the output, and rounding a large
    # difference would swamp the kept values it compares
    other = randn(other_shape, gen, dtype, "standard", scale=0.5)
    normalized_shape = {"int": p_cols, "list": [p_cols], "tuple": (p_cols,)}[shape_kind]
    return Inputs((x1, x2, other, normalized_shape), {"dropout_p": p, "training": training,
                                                      "approximate": approximate, "eps": eps})


def check(inputs, runs):
    x1, x2, other, normalized_shape = inputs.args
    kw = inputs.kwargs
    p = kw.get("dropout_p", 0.5) if kw.get("training", True) else 0.0
    for i, run in enumerate(runs):
        if not isinstance(run, torch.Tensor) or run.dtype != x1.dtype:
            return [f"call {i + 1}: expected a {x1.dtype} tensor"]
    device = runs[0].device
    z = torch.bmm(x1.to(device, torch.float64), x2.to(device, torch.float64))
    normalized = torch.nn.functional.rms_norm(z, _shape(normalized_shape), eps=kw.get("eps", 1e-5))
    kept = torch.nn.functional.gelu(normalized, approximate=kw.get("approximate", "none")) / (1.0 - p)
    # judge the dropout stage itself: output + other is 0 where dropped, the kept value elsewhere
    o = other.to(device, torch.float64).expand(kept.shape)
    stage = [run.to(torch.float64) + o for run in runs]
    eps = EPS[x1.dtype]
    # Where the kept value is below the output's rounding step at |other|, rounding alone can make
    # output + other exactly 0: such elements cannot tell dropped from kept, so they are judged on
    # their value only and left out of the dropout statistics (passed as 0 with a kept value of 0,
    # which dropout_checks leaves out, so that the mask keeps the output's layout for its independence tests).
    step = torch.finfo(x1.dtype).eps * (o.abs() + kept.abs())
    clear = kept.abs() > 4 * step
    failures = dropout_checks([torch.where(clear, s, 0.0) for s in stage], torch.where(clear, kept, 0.0), p, eps)
    scale = float(kept.square().mean().sqrt()) if kept.numel() else 0.0
    for i, s in enumerate(stage):
        bad = ~clear & (s != 0) & ((s - kept).abs() > eps * (kept.abs() + scale))
        if bool(bad.any()):
            failures.append(f"call {i + 1}: {int(bad.sum())} elements of output + other are neither 0 nor the "
                            "undropped value scaled by 1/(1-p)")
    return failures


def cost(inputs):
    x1, x2, other, _ = inputs.args
    b, n, m = x1.shape
    p_cols = x2.shape[-1]
    return Cost(flops=2 * b * n * m * p_cols + 17 * b * n * p_cols,
                bytes=element_bytes(x1, x2, other) + b * n * p_cols * x1.element_size())


TASK = Task(
    id="Fusion/fused_bmm_rmsnorm_gelu_dropout_sub",
    difficulty=4,
    entry="fused_bmm_rmsnorm_gelu_dropout_sub",
    signature=("fused_bmm_rmsnorm_gelu_dropout_sub(input1, input2, other, normalized_shape, dropout_p=0.5, "
               "training=True, approximate='none', eps=1e-5, *, out=None)"),
    description=(
        "Compute z = input1 @ input2 for batches of matrices, `input1` (B, N, M) and `input2` (B, M, P), "
        "accumulating in float32 (TF32 is accepted for float32 inputs). RMS-normalize every row of z over its "
        "last dimension, r = z / sqrt(mean(z**2) + eps), with no learned scale (`normalized_shape` is P, as an "
        "int or a 1-element list or tuple); apply GELU (approximate 'none' for the exact erf form, 'tanh' for the "
        "tanh form); apply dropout (training True: each element zeroed with probability dropout_p, 0 <= p < 1, "
        "the others divided by (1 - p); training False: unchanged); finally subtract `other`, a tensor of the "
        "inputs' dtype that broadcasts to (B, N, P). Return a new (B, N, P) tensor in the inputs' dtype. Each call "
        "must draw a fresh mask: take a seed on the host with torch.randint(0, 2**31 - 1, (1,)).item() and draw "
        "in the kernel (e.g. tl.rand(seed, offsets)). Judged statistically on output + other: 0 or the scaled "
        "value per element, zeros consistent with p, a mask independent between elements, rows and calls."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Statistical(check=check),
    allowed=(Allowance(api="torch.randint", aten=("randint",),
                       why="draw a fresh seed on the host for the dropout mask's random stream"),),
)
