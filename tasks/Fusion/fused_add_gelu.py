"""Add a scaled tensor (or number) to the input, then apply GELU."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, other, alpha=1, approximate="none", out=None):
    result = torch.nn.functional.gelu(torch.add(input, other, alpha=alpha), approximate=approximate)
    if out is not None:
        out.copy_(result)
        return out
    return result


# Per size, the cases seeds rotate through: input shape, other (a shape, or a Python number),
# alpha, approximate. The standard size has one configuration, so the timing seeds share it.
CASES = {
    "small": [((33, 257), (33, 257), 1, "none"),
              ((4, 33, 65), (65,), -0.5, "tanh")],
    "edge": [((3, 1001), 0.75, 2, "none"),
             ((1, 7, 1, 5), (7, 1, 1), 1.5, "tanh")],
    "standard": [((8192, 8192), (8192, 8192), 0.5, "none")],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, other, alpha, approximate = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode, scale=1.5)
    if isinstance(other, tuple):
        other = randn(other, gen, dtype, mode)
    return Inputs((x, other), {"alpha": alpha, "approximate": approximate})


def cost(inputs):
    x, other = inputs.args
    return Cost(flops=10 * x.numel(), bytes=2 * element_bytes(x) + element_bytes(other))


TASK = Task(
    id="Fusion/fused_add_gelu",
    difficulty=2,
    entry="fused_add_gelu",
    signature="fused_add_gelu(input, other, alpha=1, approximate='none', out=None)",
    description=(
        "Compute s = input + alpha * other and return gelu(s) as a new tensor with the input's shape and dtype. "
        "`other` is either a Python number or a tensor of the input's dtype whose shape broadcasts to the "
        "input's shape (e.g. a trailing row vector or a per-channel (C, 1, 1) tensor); `alpha` is a number. "
        "approximate='none' means the exact GELU x * 0.5 * (1 + erf(x / sqrt(2))), and approximate='tanh' means "
        "0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3))). Evaluate in float32 for half-precision "
        "inputs; if `out` is given, write the result into it and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
