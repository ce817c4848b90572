"""Cosine of every element, together with the sign bit of that cosine."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input):
    cos_result = torch.cos(input)
    return cos_result, torch.signbit(cos_result)


SHAPES = {
    "small": ((33, 257), (5, 7, 129)),
    "edge": ((1,), (3, 1, 1001)),
    "standard": ((8192, 8192), (8192, 8192)),
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shape = pick(size, **{k: v[seed % 2] for k, v in SHAPES.items()})
    # a wide range of angles: many cosines of both signs, some large arguments
    return Inputs((randn(shape, gen, dtype, mode, scale=4.0),))


def cost(inputs):
    (x,) = inputs.args
    # read x; write the cosine (x's dtype) and a one-byte boolean per element
    return Cost(flops=10 * x.numel(), bytes=2 * element_bytes(x) + x.numel())


TASK = Task(
    id="Fusion/fused_cos_signbit",
    difficulty=1,
    entry="fused_cos_signbit",
    signature="fused_cos_signbit(input: torch.Tensor)",
    description=(
        "Return a tuple (c, s) for a floating tensor `input` of any shape: c = cos(input) elementwise, as a new "
        "tensor of the input's shape and dtype, and s a torch.bool tensor of the same shape that is True exactly "
        "where the sign bit of c (the value as stored in the input's dtype, so -0.0 counts as negative) is set. "
        "Evaluate the cosine in float32 for half-precision inputs and take the sign from the rounded result. "
        "The boolean output must match exactly."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
