"""Arithmetic mean of a tensor over one or several dimensions."""

import math

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input_tensor, dim, keepdim=False, dtype=None, out=None):
    return torch.mean(input_tensor, dim, keepdim=keepdim, dtype=dtype, out=out)


# (shape, dim, keepdim) per (size, seed): a long last dim with few rows, dims given as a tuple
# (adjacent or not, negative), a leading dim with a size-1 dim. The standard size has one
# configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((8, 6000), 1, False), ((12, 40, 10), (0, 2), True)],
    "edge": [((3, 2, 7, 5), (-1, -2), True), ((1001, 1, 3), 0, False)],
    "standard": [((16, 4096, 1024), 1, True)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dim, keepdim = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode, shift=0.5)
    kwargs = {"keepdim": keepdim}
    if size == "edge" and seed % 2 and dtype != torch.float32:
        kwargs["dtype"] = torch.float32  # average half-precision values into a float32 result
    return Inputs((x, dim), kwargs)


def cost(inputs):
    x, dim = inputs.args
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    reduced = {d % x.dim() for d in dims}
    out_numel = math.prod(s for d, s in enumerate(x.shape) if d not in reduced)
    out_dtype = inputs.kwargs.get("dtype") or x.dtype
    return Cost(flops=x.numel(), bytes=element_bytes(x) + out_numel * out_dtype.itemsize)


TASK = Task(
    id="Reduce/mean",
    difficulty=1,
    entry="mean",
    signature="mean(input_tensor, dim, keepdim=False, dtype=None, out=None)",
    kernelbenchx_signature=(
        "input (Tensor): the input tensor. dim (int or tuple of ints): the dimension or dimensions to reduce. "
        "keepdim (bool): whether the output tensor has dim retained or not. dtype (torch.dtype, optional): the "
        "desired data type of returned tensor. If specified, the input tensor is casted to dtype before th"
    ),
    description=(
        "Average the elements of a floating-point `input_tensor` over `dim`, an int or a tuple of ints "
        "(negative values count from the end; the listed dims may be in any order and need not be adjacent): "
        "each result element is the sum of its reduced elements divided by their count. With keepdim=True the "
        "reduced dims stay with size 1, otherwise they are removed. The result has the input's dtype, or "
        "`dtype` when given (the input is converted to it first); accumulate in float32 for half-precision "
        "data; `out` is always None."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
