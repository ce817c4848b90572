"""Logistic sigmoid, element by element."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, out=None):
    return torch.sigmoid(input, out=out)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shape = pick(size, small=((33, 257), (4, 9, 130))[seed % 2], standard=(8192, 8192),
                 edge=((3, 1001), (5, 1, 17))[seed % 2])
    # wide enough that both tails saturate; outlier mode pushes some elements to |x| of several hundred
    return Inputs((randn(shape, gen, dtype, mode, scale=4.0),))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=4 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Activation/sigmoid",
    difficulty=2,
    entry="sigmoid",
    signature="sigmoid(input, out=None)",
    kernelbenchx_signature="sigmoid(input, *, out=None)",
    description=(
        "Logistic function 1 / (1 + exp(-x)) of every element of `input` (any shape), returned as a new tensor "
        "of the same shape and dtype; `input` is not modified. The result must stay accurate and finite for "
        "large |x| (it tends to 1 for large positive x and to 0, without underflow to NaN, for large negative "
        "x). If a tensor `out` of the right shape and dtype is passed, write the result there and return it "
        "(the cases here leave out=None). Compute in float32 for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
