"""Elementwise absolute value."""

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# Shapes per (size, seed): 2-D and 3-D tensors, a single element, size-1 dims and odd lengths.
SHAPES = {
    "small": [(33, 257), (4, 50, 41)],
    "edge": [(3, 1001), (2, 1, 17, 5)],
    "standard": [(8192, 8192)],
}


def reference(input_tensor, out=None):
    return torch.abs(input_tensor, out=out)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shapes = pick(size, **SHAPES)
    x = randn(shapes[seed % len(shapes)], gen, dtype, mode, scale=3.0)
    if size != "standard":
        # signed zeros and infinities: |-0| = +0, |-inf| = +inf
        flat = x.view(-1)
        flat[:4] = torch.tensor([-0.0, 0.0, -float("inf"), float("inf")], dtype=dtype)
    return Inputs((x,))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/abs",
    difficulty=1,
    entry="abs",
    signature="abs(input_tensor, out=None)",
    kernelbenchx_signature="abs(input, *, out=None)",
    description=(
        "Return a new tensor holding |x| for every element x of the floating-point tensor `input_tensor`, with "
        "the input's shape and dtype (any shape, any number of dimensions). Negative zero becomes +0, -inf "
        "becomes +inf and NaN stays NaN; the values are only stripped of their sign, so the result must match "
        "exactly. If `out` is given, write the result into it and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Exact(),
)
