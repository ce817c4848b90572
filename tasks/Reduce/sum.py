"""Sum of a tensor over one or several dimensions."""

import math

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, dim, keepdim=False, dtype=None):
    return torch.sum(input, dim, keepdim=keepdim, dtype=dtype)


# (shape, dim, keepdim) per (size, seed): last dims as a tuple, a middle dim, a leading dim,
# and interleaved kept/reduced dims, with negative dims and size-1 dims among them. The standard
# size has one configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((4, 40, 500), (2, 1), False), ((12, 40, 10), 1, True)],
    "edge": [((3, 2, 7, 5), (-1, 1), True), ((1001, 1, 3), 0, False)],
    "standard": [((64, 1024, 1024), (2, 1), False)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dim, keepdim = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode, shift=0.5)
    kwargs = {"keepdim": keepdim}
    if size == "edge" and seed % 2 and dtype != torch.float32:
        kwargs["dtype"] = torch.float32  # sum half-precision values into a float32 result
    return Inputs((x, dim), kwargs)


def cost(inputs):
    x, dim = inputs.args
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    reduced = {d % x.dim() for d in dims}
    out_numel = math.prod(s for d, s in enumerate(x.shape) if d not in reduced)
    out_dtype = inputs.kwargs.get("dtype") if inputs.kwargs.get("dtype") is not None else x.dtype
    out_bytes = out_numel * torch.empty((), dtype=out_dtype).element_size()
    return Cost(flops=x.numel(), bytes=element_bytes(x) + out_bytes)


TASK = Task(
    id="Reduce/sum",
    difficulty=2,
    entry="sum",
    signature="sum(input, dim, keepdim=False, dtype=None)",
    kernelbenchx_signature="sum(input, dim, keepdim=False, *, dtype=None)",
    description=(
        "Add up the elements of `input` over the dimension `dim`, which is an int or a tuple of ints "
        "(negative values count from the end; a tuple reduces over all the listed dimensions at once, in "
        "any order, adjacent or not). With keepdim=True each reduced dimension stays in the result with "
        "size 1, otherwise it is removed. The result has the input's dtype, or `dtype` when one is given "
        "(the input is then converted to it before summing); accumulate in float32 for half-precision data."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
