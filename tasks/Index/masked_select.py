"""Pick the elements of a tensor where a (broadcast) boolean mask is True, as a 1-D tensor."""

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, mask):
    return torch.masked_select(input, mask)


# (input shape, mask shape, fraction of True) per (size, seed): equal shapes, a mask and an input
# that broadcast against each other, a sparse mask and a dense one, size-1 dims. The standard
# size has one configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((64, 100), (64, 100), 0.5), ((12, 1, 50), (7, 1), 0.3)],
    "edge": [((1001,), (1001,), 0.02), ((3, 1, 17), (1, 5, 17), 0.9)],
    "standard": [((8192, 8192), (8192, 8192), 0.5)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    in_shape, mask_shape, fraction = cases[seed % len(cases)]
    scale = 1000.0 if not dtype.is_floating_point else 1.0
    x = randn(in_shape, gen, dtype, mode, scale=scale)
    mask = torch.rand(mask_shape, generator=gen) < fraction
    return Inputs((x, mask))


def cost(inputs):
    x, mask = inputs.args
    shape = torch.broadcast_shapes(x.shape, mask.shape)
    selected = int(mask.expand(shape).sum())
    return Cost(flops=0, bytes=element_bytes(x, mask) + selected * x.element_size())


TASK = Task(
    id="Index/masked_select",
    difficulty=4,
    entry="masked_select",
    signature="masked_select(input, mask)",
    description=(
        "Return a new 1-D tensor with the elements of `input` at the positions where the bool tensor `mask` is "
        "True, in row-major (C) order of the positions. `input` and `mask` broadcast against each other: "
        "positions range over their broadcast shape, and an input element repeated by broadcasting is picked "
        "once per selected position. The length of the result is the number of True positions, known only "
        "from the data (count first, e.g. per-block counts and a prefix sum; reading the total on the host "
        "with .item() is fine); the dtype is the input's."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.int32),
    contract=Exact(),
)
