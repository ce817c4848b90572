"""Elementwise Gauss error function."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# Shapes per (size, seed): 2-D and 3-D tensors, size-1 dims and odd lengths.
SHAPES = {
    "small": [(33, 257), (4, 50, 41)],
    "edge": [(3, 1001), (2, 1, 17, 5)],
    "standard": [(8192, 8192)],
}


def reference(input_tensor):
    return torch.special.erf(input_tensor)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shapes = pick(size, **SHAPES)
    x = randn(shapes[seed % len(shapes)], gen, dtype, mode, scale=1.5)
    if size != "standard":
        flat = x.view(-1)
        values = [0.0, -0.0, float("inf"), -float("inf")] + [float("nan")] * (seed % 2)
        flat[:len(values)] = torch.tensor(values, dtype=dtype)
    return Inputs((x,))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=10 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/erf",
    difficulty=3,
    entry="erf",
    signature="erf(input_tensor)",
    kernelbenchx_signature="erf(input, *, out=None)",
    description=(
        "Return the error function erf(x) = 2/sqrt(pi) * integral from 0 to x of exp(-t^2) dt for every "
        "element of the floating-point tensor `input_tensor`, as a new tensor with the input's shape and "
        "dtype. erf is odd, tends to +-1 for large |x| (erf(+-inf) = +-1) and keeps NaN; compute in float32 "
        "for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
