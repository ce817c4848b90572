"""Elementwise inverse sine."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# Shapes per (size, seed): 2-D and 3-D tensors, size-1 dims and odd lengths.
SHAPES = {
    "small": [(33, 257), (4, 50, 41)],
    "edge": [(3, 1001), (2, 1, 17, 5)],
    "standard": [(8192, 8192)],
}
SPECIAL = [1.0, -1.0, 0.0, -0.0, 0.5, -0.5, 1e-5, 1.0001, -2.0, float("inf")]


def reference(input_tensor):
    return torch.asin(input_tensor)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shapes = pick(size, **SHAPES)
    # about 90% of the values inside [-1, 1]; the rest (and every outlier) give NaN
    x = randn(shapes[seed % len(shapes)], gen, dtype, mode, scale=0.6)
    if size != "standard":
        flat = x.view(-1)
        values = SPECIAL + [float("nan")] * (seed % 2)  # NaN on odd seeds only
        flat[:len(values)] = torch.tensor(values, dtype=torch.float32).to(dtype)
    return Inputs((x,))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=12 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/asin",
    difficulty=1,
    entry="asin",
    signature="asin(input_tensor)",
    kernelbenchx_signature="asin(input, *, out=None)",
    description=(
        "Return the arcsine of every element of the floating-point tensor `input_tensor` (in radians, within "
        "[-pi/2, pi/2]) as a new tensor with the input's shape and dtype. Elements outside [-1, 1], and NaN, "
        "give NaN; asin(+-1) = +-pi/2 exactly and the result must stay accurate right up to |x| = 1. Compute "
        "in float32 for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
