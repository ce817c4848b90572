"""Minimum values along a dimension, with the index of each."""

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, with_outliers


def reference(input_tensor, dim, keepdim=False):
    values, indices = torch.min(input_tensor, dim, keepdim=keepdim)
    return values, indices


# (shape, dim, keepdim) per (size, seed): the last dim, a leading dim, a short last dim, a middle
# dim with size-1 dims; the edge cases reduce over thousands of elements. Integer inputs hold
# many equal values, so ties (resolved to the first occurrence) are common. The standard size has
# one configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((64, 100), 1, False), ((40, 12, 10), 0, True)],
    "edge": [((5, 3001), -1, False), ((5, 1, 2049, 3), 2, True)],
    "standard": [((256, 1024, 256), 1, False)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dim, keepdim = cases[seed % len(cases)]
    if dtype.is_floating_point:
        x = randn(shape, gen, dtype, mode)
    else:
        # integers in [-2, 2] (outliers beyond): the minimum repeats many times along every reduced dim
        x = (torch.randn(shape, generator=gen) * 2.0).round().clamp(-2, 2)
        if mode == "outlier":
            x = with_outliers(x, gen)
        x = x.to(dtype)
    return Inputs((x, dim), {"keepdim": keepdim})


def cost(inputs):
    x, dim = inputs.args
    out_numel = x.numel() // x.shape[dim]
    return Cost(flops=x.numel(), bytes=element_bytes(x) + out_numel * (8 + x.element_size()))


TASK = Task(
    id="Reduce/min",
    difficulty=2,
    entry="min",
    signature="min(input_tensor, dim, keepdim=False)",
    kernelbenchx_signature="min(input, dim, keepdim=False, *, out=None)",
    description=(
        "Reduce `input_tensor` along dimension `dim` (an int, negative counting from the end) to its minimum, "
        "and return a tuple (values, indices): the minima in the input's dtype and the int64 position of each "
        "along `dim`, the first occurrence when several elements share the minimum. With keepdim=True the "
        "reduced dim stays with size 1 in both results, otherwise it is removed. Inputs hold no NaN; int32 "
        "inputs are compared as integers."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.int32),
    contract=Exact(),
)
