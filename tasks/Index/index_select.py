"""Gather whole slices of a tensor along one dimension, in the order a 1-D index names them."""

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, dim, index):
    return torch.index_select(input, dim, index)


# (input shape, dim, index length) per (size, seed): rows of a table (embedding lookup), a middle
# dim, the last dim (strided gathers), negative dims, size-1 dims and a single index. Indices
# repeat and come in any order. The standard size has one configuration, so the seeds that
# rotate during timing share it.
CASES = {
    "small": [((300, 40), 0, 64), ((8, 50, 20), 1, 30)],
    "edge": [((3, 1001), -1, 999), ((5, 1, 17, 3), -2, 1)],
    "standard": [((32768, 2048), 0, 32768)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dim, count = cases[seed % len(cases)]
    scale = 1000.0 if not dtype.is_floating_point else 1.0
    x = randn(shape, gen, dtype, mode, scale=scale)
    index = torch.randint(0, shape[dim], (count,), generator=gen, dtype=torch.int64)
    return Inputs((x, dim, index))


def cost(inputs):
    x, dim, index = inputs.args
    slice_numel = x.numel() // x.shape[dim]
    read = index.unique().numel() * slice_numel * x.element_size()
    written = index.numel() * slice_numel * x.element_size()
    return Cost(flops=0, bytes=element_bytes(index) + read + written)


TASK = Task(
    id="Index/index_select",
    difficulty=3,
    entry="index_select",
    signature="index_select(input, dim, index)",
    description=(
        "Return a new contiguous tensor made of the slices input.select(dim, index[j]) for j = 0 .. len(index)-1, "
        "stacked along `dim` in that order: the result has the input's shape and dtype except that dim `dim` "
        "has length len(index). `index` is a 1-D int64 tensor with values in [0, input.shape[dim]); they may "
        "repeat and need not be sorted. `dim` may be negative. Elements are copied, not computed."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.int32),
    contract=Exact(),
)
