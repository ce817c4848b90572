"""SELU (scaled exponential linear unit), optionally in place."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, inplace=False):
    return torch.nn.functional.selu(input, inplace=inplace)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shape = pick(size, small=((33, 257), (4, 9, 130))[seed % 2], standard=(8192, 8192),
                 edge=((3, 1001), (5, 1, 17))[seed % 2])
    # odd seeds of the small and edge sizes overwrite the input; the timed configuration does not
    inplace = bool(seed % 2) and size != "standard"
    return Inputs((randn(shape, gen, dtype, mode, scale=2.0),), {"inplace": inplace})


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=5 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Activation/selu",
    difficulty=1,
    entry="selu",
    signature="selu(input, inplace=False)",
    description=(
        "Scaled exponential linear unit of every element of a tensor of any shape: with alpha = "
        "1.6732632423543772848170429916717 and scale = 1.0507009873554804934193349852946, a positive x maps to "
        "scale * x and x <= 0 maps to scale * alpha * (exp(x) - 1). With inplace=False return a new tensor of "
        "the input's shape and dtype, leaving `input` as it was; with inplace=True store the result into `input` "
        "and return that same tensor (its final contents are checked). Compute in float32 for half-precision data."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    mutates=(0,),
)
