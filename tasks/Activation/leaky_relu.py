"""Leaky ReLU with a configurable negative slope, optionally in place."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, negative_slope=0.01, inplace=False):
    return torch.nn.functional.leaky_relu(input, negative_slope=negative_slope, inplace=inplace)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shape = pick(size, small=((33, 257), (4, 9, 130))[seed % 2], standard=(8192, 8192),
                 edge=((3, 1001), (5, 1, 17))[seed % 2])
    x = randn(shape, gen, dtype, mode)
    if size == "standard":
        kwargs = {"negative_slope": 0.1}          # one timed configuration for every seed
    elif seed % 2:
        kwargs = {"negative_slope": 0.2, "inplace": True}
    else:
        kwargs = {}                               # the defaults: slope 0.01, a new tensor
    return Inputs((x,), kwargs)


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=2 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Activation/leaky_relu",
    difficulty=2,
    entry="leaky_relu",
    signature="leaky_relu(input, negative_slope=0.01, inplace=False)",
    description=(
        "Leaky rectifier applied to each element of a tensor of any shape: entries that are zero or positive pass "
        "through unchanged and negative entries x become negative_slope * x, where `negative_slope` is a Python "
        "float. With inplace=False return a new tensor with the shape and dtype of `input` and do not modify "
        "`input`; with inplace=True overwrite `input` with the result and return that same tensor. Compute the "
        "product in float32 for half-precision inputs; the final contents of `input` are checked as well."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    mutates=(0,),
)
