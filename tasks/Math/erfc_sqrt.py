"""Complementary error function and square root of one tensor, returned together."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# Shapes per (size, seed): 2-D and 3-D tensors, size-1 dims and odd lengths.
SHAPES = {
    "small": [(33, 257), (4, 50, 41)],
    "edge": [(3, 1001), (2, 1, 17, 5)],
    "standard": [(8192, 8192)],
}
SPECIAL = [0.0, -0.0, 0.25, -1.0, 10.0, 3.5, float("inf"), -float("inf")]


def reference(input):
    return torch.special.erfc(input), torch.sqrt(input)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shapes = pick(size, **SHAPES)
    # mostly non-negative (the square root is NaN below zero); erfc is tiny past about 4
    x = randn(shapes[seed % len(shapes)], gen, dtype, mode, scale=1.5, shift=1.0)
    if size != "standard":
        flat = x.view(-1)
        values = SPECIAL + [float("nan")] * (seed % 2)  # NaN on odd seeds only
        flat[:len(values)] = torch.tensor(values, dtype=torch.float32).to(dtype)
    return Inputs((x,))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=25 * x.numel(), bytes=3 * element_bytes(x))


TASK = Task(
    id="Math/erfc_sqrt",
    difficulty=2,
    entry="erfc_sqrt",
    signature="erfc_sqrt(input: torch.Tensor)",
    description=(
        "Return a tuple of two new tensors, both with the shape and dtype of the floating-point tensor "
        "`input`: erfc(x) = 1 - erf(x) and sqrt(x), element by element. erfc falls from 2 (x -> -inf) to 0 "
        "(x -> +inf) and should keep its small values for large positive x instead of cancelling 1 - erf(x); "
        "the square root of a negative number (and anything involving NaN) is NaN. Compute in float32 for "
        "half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
