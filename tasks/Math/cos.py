"""Elementwise cosine."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# Shapes per (size, seed): 2-D and 3-D tensors, size-1 dims and odd lengths.
SHAPES = {
    "small": [(33, 257), (4, 50, 41)],
    "edge": [(3, 1001), (2, 1, 17, 5)],
    "standard": [(8192, 8192)],
}


def reference(input_tensor):
    return torch.cos(input_tensor)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shapes = pick(size, **SHAPES)
    # a few periods around zero; outliers (x50) reach several hundred radians
    x = randn(shapes[seed % len(shapes)], gen, dtype, mode, scale=4.0)
    return Inputs((x,))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/cos",
    difficulty=1,
    entry="cos",
    signature="cos(input_tensor)",
    kernelbenchx_signature="cos(input, *, out=None)",
    description=(
        "Return cos(x) (x in radians) for every element of the floating-point tensor `input_tensor`, as a new "
        "tensor with the input's shape and dtype. Arguments can be hundreds of radians, so the range reduction "
        "must stay accurate for large |x|; compute in float32 for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
