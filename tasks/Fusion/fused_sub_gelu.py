"""Subtract a scaled tensor (or number), then GELU."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, other, alpha=1, approximate="none", out=None):
    difference = torch.sub(input, other, alpha=alpha)
    return torch.nn.functional.gelu(difference, approximate=approximate)


# Per (size, seed): (input shape, other: a shape broadcastable to the input's or a Python number, alpha,
# approximate). The standard size has one configuration.
CASES = {
    "small": [((33, 257), (33, 257), 1, "none"), ((4, 9, 130), (9, 1), 0.5, "tanh")],
    "edge": [((3, 1001), 0.75, 2.0, "tanh"), ((5, 3, 7, 17), (3, 1, 17), -1.5, "none")],
    "standard": [((8192, 8192), (8192, 8192), 0.5, "none")],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, other, alpha, approximate = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode, scale=2.0)
    if isinstance(other, tuple):
        other = randn(other, gen, dtype, mode)
    return Inputs((x, other), {"alpha": alpha, "approximate": approximate})


def cost(inputs):
    x, other = inputs.args
    shape = torch.broadcast_shapes(x.shape, other.shape) if isinstance(other, torch.Tensor) else x.shape
    out_bytes = shape.numel() * x.element_size()
    return Cost(flops=10 * shape.numel(), bytes=element_bytes(x, other) + out_bytes)


TASK = Task(
    id="Fusion/fused_sub_gelu",
    difficulty=3,
    entry="fused_sub_gelu",
    signature="fused_sub_gelu(input, other, alpha=1, approximate='none', out=None)",
    description=(
        "Compute d = input - alpha * other, where `other` is a Python number or a tensor of the input's dtype "
        "that broadcasts to the input's shape (at most 4 dims), then return GELU(d) as a new tensor of the "
        "input's shape and dtype: exact d * 0.5 * (1 + erf(d / sqrt(2))) for approximate='none', "
        "0.5 * d * (1 + tanh(sqrt(2/pi) * (d + 0.044715 * d**3))) for approximate='tanh'. `alpha` is a Python "
        "number (possibly negative); `out` is always None. Compute in float32 for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
