"""Square root of the exponential, elementwise."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# Shapes per (size, seed): 2-D and 3-D tensors, size-1 dims and odd lengths.
SHAPES = {
    "small": [(33, 257), (4, 50, 41)],
    "edge": [(3, 1001), (2, 1, 17, 5)],
    "standard": [(8192, 8192)],
}


def reference(input, out=None):
    return torch.sqrt(torch.exp(input), out=out)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shapes = pick(size, **SHAPES)
    # outliers (x50) reach a few hundred, where exp overflows in the narrow dtypes
    x = randn(shapes[seed % len(shapes)], gen, dtype, mode, scale=2.0)
    return Inputs((x,))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=2 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/exp_sqrt",
    difficulty=1,
    entry="exp_sqrt",
    signature="exp_sqrt(input, out=None)",
    description=(
        "Return sqrt(exp(x)) for every element x of the floating-point tensor `input`, as a new tensor with "
        "the input's shape and dtype; mathematically this is exp(x / 2). Where exp(x) itself overflows the "
        "dtype, either +inf (the composed result) or the finite exp(x / 2) is accepted; compute in float32 for "
        "half-precision inputs. If `out` is given, write the result into it and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
