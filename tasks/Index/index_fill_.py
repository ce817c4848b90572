"""In-place fill of whole slices of a tensor, chosen by an index along one dimension."""

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(dim, x, index, value):
    return x.index_fill_(dim, index, value)


# (x shape, dim, index length, value) per (size, seed): the first, a middle and the last dim,
# negative dims, repeated indices, a single index and size-1 dims. The standard size has one
# configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((48, 130), 1, 40, -1.5), ((6, 50, 20), 0, 4, 3.25)],
    "edge": [((5, 1, 17, 3), -2, 9, 0.0), ((1001,), 0, 1, -7.0)],
    "standard": [((32, 2048, 1024), 1, 3000, -1.0)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dim, count, value = cases[seed % len(cases)]
    scale = 1000.0 if not dtype.is_floating_point else 1.0
    x = randn(shape, gen, dtype, mode, scale=scale)
    # indices drawn with replacement, so some slices are named more than once
    index = torch.randint(0, shape[dim], (count,), generator=gen, dtype=torch.int64)
    if not dtype.is_floating_point:
        value = float(int(value * scale))
    return Inputs((dim, x, index, value))


def cost(inputs):
    dim, x, index, _ = inputs.args
    slice_numel = x.numel() // x.shape[dim]
    filled = index.unique().numel() * slice_numel
    return Cost(flops=0, bytes=element_bytes(index) + filled * x.element_size())


TASK = Task(
    id="Index/index_fill_",
    difficulty=2,
    entry="index_fill_",
    signature="index_fill_(dim, x, index, value)",
    kernelbenchx_signature="index_fill_(dim, index, value)",
    description=(
        "The in-place tensor method written as a function whose first argument is the dimension: for every "
        "entry i of the 1-D int64 tensor `index` (values in [0, x.shape[dim]), possibly repeated, in any "
        "order), set the whole slice x.select(dim, i) of the tensor `x` to the Python number `value`, "
        "converted to the dtype of `x`. `dim` may be negative. `x` is modified in place and returned (the same "
        "tensor object); elements outside the named slices keep their values."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.int32),
    contract=Exact(),
    mutates=(1,),
)
