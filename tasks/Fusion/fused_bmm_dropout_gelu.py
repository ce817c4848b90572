"""Batched matrix product, dropout, then GELU; judged statistically (never against torch's random stream)."""

import torch

from evaluator.contracts import Statistical
from evaluator.randomness import dropout_checks
from evaluator.task import Allowance, Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input1, input2, p=0.5, training=True, inplace=False, approximate="none", *, out=None):
    z = torch.bmm(input1, input2)
    d = torch.nn.functional.dropout(z, p=p, training=training, inplace=inplace)
    result = torch.nn.functional.gelu(d, approximate=approximate)
    if out is not None:
        out.copy_(result)
        return out
    return result


# Per size, the cases seeds rotate through: (B, N, M, P), p, training, approximate. Dropout on and off,
# p = 0 with training (nothing may be dropped). The standard size has one configuration.
CASES = {
    "small": [((3, 48, 64, 40), 0.5, True, "none"), ((2, 33, 80, 72), 0.2, False, "tanh")],
    "edge": [((5, 1, 67, 33), 0.0, True, "tanh"), ((1, 37, 3, 129), 0.3, True, "none")],
    "standard": [((16, 2048, 1024, 1024), 0.1, True, "none")],     # ~69 GFLOP
}

# A kept element must match the float64 value within EPS * (|value| + rms): room for TF32 products
# (float32) and for rounding the result to a half-precision dtype.
EPS = {torch.float32: 8e-3, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    (b, n, m, p_cols), p, training, approximate = cases[seed % len(cases)]
    x1 = randn((b, n, m), gen, dtype, mode)
    x2 = randn((b, m, p_cols), gen, dtype, mode, scale=1.5 / m ** 0.5)
    return Inputs((x1, x2), {"p": p, "training": training, "approximate": approximate})


def check(inputs, runs):
    x1, x2 = inputs.args
    kw = inputs.kwargs
    p = kw.get("p", 0.5) if kw.get("training", True) else 0.0
    device = runs[0].device
    z = torch.bmm(x1.to(device, torch.float64), x2.to(device, torch.float64))
    # a kept element is gelu(z / (1 - p)); a dropped one is gelu(0) = 0
    kept = torch.nn.functional.gelu(z / (1.0 - p), approximate=kw.get("approximate", "none"))
    for i, run in enumerate(runs):
        if not isinstance(run, torch.Tensor) or run.dtype != x1.dtype:
            return [f"call {i + 1}: expected a {x1.dtype} tensor"]
    return dropout_checks(runs, kept, p, EPS[x1.dtype])


def cost(inputs):
    x1, x2 = inputs.args
    b, n, m = x1.shape
    p_cols = x2.shape[-1]
    return Cost(flops=2 * b * n * m * p_cols + 12 * b * n * p_cols,
                bytes=element_bytes(x1, x2) + b * n * p_cols * x1.element_size())


TASK = Task(
    id="Fusion/fused_bmm_dropout_gelu",
    difficulty=3,
    entry="fused_bmm_dropout_gelu",
    signature=("fused_bmm_dropout_gelu(input1, input2, p=0.5, training=True, inplace=False, approximate='none', *, "
               "out=None)"),
    description=(
        "Compute z = input1 @ input2 for batches of matrices, `input1` (B, N, M) and `input2` (B, M, P), "
        "accumulating in float32 (TF32 is accepted for float32 inputs). Apply dropout to z: when training is True "
        "each element is independently zeroed with probability p (0 <= p < 1) and otherwise divided by (1 - p); "
        "when training is False z is unchanged. Then apply GELU, exact (approximate='none', x * 0.5 * (1 + "
        "erf(x / sqrt(2)))) or tanh-approximated (approximate='tanh'), so dropped elements come out 0, and return "
        "a new (B, N, P) tensor in the inputs' dtype (`inplace` has no visible effect). Every call must draw a "
        "fresh mask (take a seed on the host with torch.randint(0, 2**31 - 1, (1,)).item() and draw in the kernel, "
        "e.g. with tl.rand(seed, offsets)); the result is judged statistically: each element is 0 or the value "
        "above, the share of zeros fits p, and the mask is independent between elements, rows and calls."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Statistical(check=check),
    allowed=(Allowance(api="torch.randint", aten=("randint",),
                       why="draw a fresh seed on the host for the dropout mask's random stream"),),
)
