"""Copy a tensor into a new contiguous tensor whose dimensions are reordered."""

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, dims):
    return torch.permute_copy(input, dims)


# (input shape, dims) per (size, seed): a 3-D rotation, a 4-D reorder with a negative dim, a
# matrix transpose, and a 5-D reorder with a size-1 dim that keeps the last dim in place. The standard size (NCHW to NHWC) has one
# configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((40, 50, 3), (2, 0, 1)), ((6, 10, 12, 8), (-1, 1, 0, 2))],
    "edge": [((3, 1001), (1, 0)), ((2, 3, 1, 5, 7), (3, 1, -3, 0, 4))],
    "standard": [((16, 128, 128, 256), (0, 2, 3, 1))],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dims = cases[seed % len(cases)]
    scale = 1000.0 if not dtype.is_floating_point else 1.0
    return Inputs((randn(shape, gen, dtype, mode, scale=scale), dims))


def cost(inputs):
    (x, _) = inputs.args
    return Cost(flops=0, bytes=2 * element_bytes(x))


TASK = Task(
    id="Index/permute_copy",
    difficulty=4,
    entry="permute_copy",
    signature="permute_copy(input, dims)",
    kernelbenchx_signature="torch.permute_copy(input, dims)",
    description=(
        "Return a new contiguous tensor `out` with out.shape[i] == input.shape[dims[i]] and "
        "out[j_0, ..., j_{n-1}] equal to the input element whose coordinate along dim dims[i] is j_i; "
        "`dims` is a tuple holding every dim of the input exactly once (negative values count from the "
        "end). The result is a copy (not a view) with the input's dtype; the input is left unchanged. "
        "Reads and writes cannot both be in memory order, so tile the copy."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    host_copies=False,
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.int32),
    contract=Exact(),
)
