"""Hyperbolic tangent, element by element."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input_tensor, out_tensor=None):
    return torch.tanh(input_tensor, out=out_tensor)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shape = pick(size, small=((33, 257), (4, 9, 130))[seed % 2], standard=(8192, 8192),
                 edge=((3, 1001), (5, 1, 17))[seed % 2])
    return Inputs((randn(shape, gen, dtype, mode, scale=2.0),))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=5 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Activation/tanh",
    difficulty=1,
    entry="tanh",
    signature="tanh(input_tensor, out_tensor=None)",
    kernelbenchx_signature="tanh(input, *, out=None)",
    description=(
        "Hyperbolic tangent (e^x - e^-x) / (e^x + e^-x) of each element of `input_tensor`, a tensor of any "
        "shape, returned as a new tensor with the same shape and dtype while `input_tensor` stays unchanged. "
        "Keep full relative accuracy near zero (avoid 1 - something cancellation there) and saturate cleanly "
        "to +-1 for large |x| without producing NaN. If `out_tensor` (a tensor of the right shape and dtype) "
        "is given, fill it and return it; the cases here pass out_tensor=None. Compute in float32 for "
        "half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
