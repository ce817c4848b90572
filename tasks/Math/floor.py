"""Elementwise floor."""

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# Shapes per (size, seed): 2-D and 3-D tensors, size-1 dims and odd lengths.
SHAPES = {
    "small": [(33, 257), (4, 50, 41)],
    "edge": [(3, 1001), (2, 1, 17, 5)],
    "standard": [(8192, 8192)],
}
SPECIAL = [-0.0, 0.0, -0.5, 0.5, -1.0, 2.0, -2.5, float("inf"), -float("inf"), 1e7 + 0.5, -3e8]


def reference(input, out=None):
    return torch.floor(input, out=out)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shapes = pick(size, **SHAPES)
    x = randn(shapes[seed % len(shapes)], gen, dtype, mode, scale=20.0)
    if size != "standard":
        # integers, halves, signed zeros, infinities, NaN and values too large to have a fraction
        flat = x.view(-1)
        values = SPECIAL + [float("nan")] * (seed % 2)  # NaN on odd seeds only
        flat[:len(values)] = torch.tensor(values, dtype=torch.float32).to(dtype)
    return Inputs((x,))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/floor",
    difficulty=2,
    entry="floor",
    signature="floor(input, out=None)",
    kernelbenchx_signature="floor(input, *, out=None)",
    description=(
        "Round every element of the floating-point tensor `input` down to the nearest integer (toward "
        "-inf: floor(-2.5) = -3, floor(2.5) = 2) and return the values as a new tensor of the input's shape "
        "and dtype. Integers, values too large to carry a fraction, infinities and NaN come back unchanged, "
        "and the results must match exactly. If `out` is given, write the result into it and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Exact(),
)
