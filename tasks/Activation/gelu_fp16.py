"""GELU on float16 tensors, exact (erf) or tanh-approximated."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, approximate="none"):
    return torch.nn.functional.gelu(input, approximate=approximate)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shape = pick(size, small=((33, 257), (4, 9, 130))[seed % 2], standard=(8192, 8192),
                 edge=((3, 1001), (5, 1, 17))[seed % 2])
    # the timed configuration is the exact form; odd seeds of the small and edge sizes use tanh
    approximate = "tanh" if seed % 2 and size != "standard" else "none"
    return Inputs((randn(shape, gen, dtype, mode, scale=2.0),), {"approximate": approximate})


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=8 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Activation/gelu_fp16",
    difficulty=1,
    entry="gelu_fp16",
    signature="gelu_fp16(input: Tensor, approximate: str='none')",
    description=(
        "GELU of every element of a torch.float16 tensor of any shape, returned as a new torch.float16 tensor "
        "of the same shape (input and output are both half precision (IEEE float16); no other dtype is evaluated). "
        "approximate='none' means x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2))), and approximate='tanh' means "
        "0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))). Load each value, evaluate the formula in "
        "float32 and round once to float16 when storing."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float16,),
)
