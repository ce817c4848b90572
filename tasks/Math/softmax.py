"""Softmax along one dimension."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, dim, dtype=None):
    return torch.nn.functional.softmax(input, dim, dtype=dtype)


# (shape, dim) per (size, seed): the last dim and a non-last dim, given as positive or negative
# numbers; the edge rows are longer than one block of a typical kernel, or only a few elements.
# The standard size has one configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((37, 300), -1), ((16, 50, 24), 1)],
    "edge": [((3, 9001), 1), ((5, 2999, 3), -2)],
    "standard": [((8192, 8192), -1)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dim = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode, scale=2.0)
    kwargs = {}
    if size == "small" and seed % 2 and dtype != torch.float32:
        kwargs["dtype"] = torch.float32  # half-precision input, float32 result
    return Inputs((x, dim), kwargs)


def cost(inputs):
    x, _ = inputs.args
    out_dtype = inputs.kwargs.get("dtype")
    out_size = x.element_size() if out_dtype is None else torch.empty((), dtype=out_dtype).element_size()
    return Cost(flops=4 * x.numel(), bytes=element_bytes(x) + x.numel() * out_size)


TASK = Task(
    id="Math/softmax",
    difficulty=4,
    entry="softmax",
    signature="softmax(input, dim, dtype=None)",
    description=(
        "Return softmax(input) along dimension `dim` (an int, possibly negative): every slice along `dim` "
        "becomes exp(x_i - max_j x_j) / sum_j exp(x_j - max_j x_j), so its elements lie in [0, 1] and add up "
        "to 1. The result has the input's shape and dtype; if `dtype` is given, the input is converted to "
        "that dtype first and the result has it. Subtract the slice maximum for stability (inputs may hold "
        "large outliers), compute in float32 for half-precision data, and handle slices too long to keep "
        "in one block."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
