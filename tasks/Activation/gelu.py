"""GELU activation, exact (erf) or tanh-approximated."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, approximate="none"):
    return torch.nn.functional.gelu(input, approximate=approximate)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shape = pick(size, small=(33, 257), standard=(8192, 8192), edge=(3, 1001))
    approximate = "tanh" if seed % 2 else "none"
    return Inputs((randn(shape, gen, dtype, mode, scale=2.0),), {"approximate": approximate})


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=8 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Activation/gelu",
    difficulty=4,
    entry="gelu",
    signature="gelu(input, approximate='none')",
    description=(
        "Apply the Gaussian Error Linear Unit to every element of `input` and return a new tensor of the "
        "same shape and dtype. With approximate='none' use the exact form x * 0.5 * (1 + erf(x / sqrt(2))); "
        "with approximate='tanh' use 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3))). "
        "Inputs may have any shape; compute in float32 for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
