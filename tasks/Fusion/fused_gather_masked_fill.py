"""Gather along a dimension, then overwrite the gathered values with a constant where a mask is set."""

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, dim, index, mask, value, *, sparse_grad=False, out=None):
    gathered = torch.gather(input, dim, index, sparse_grad=sparse_grad)
    result = gathered.masked_fill(mask, value)
    if out is not None:
        out.copy_(result)
        return out
    return result


# (input shape, dim, index shape, mask shape, value) per (size, seed): the first, a middle and the
# last dim, negative dims, an index smaller than the input in the other dims, masks that broadcast
# (fewer dims, size-1 dims) and full masks. The standard size has one configuration.
CASES = {
    "small": [((40, 64), 0, (25, 50), (25, 50), -1.5), ((8, 20, 30), 1, (6, 12, 25), (12, 1), 0.0)],
    "edge": [((3, 1001), -1, (2, 700), (700,), 7.25), ((5, 1, 17, 3), -2, (4, 1, 9, 3), (4, 1, 9, 3), -0.5)],
    "standard": [((8192, 8192), 1, (8192, 4096), (8192, 4096), -1.0)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    in_shape, dim, index_shape, mask_shape, value = cases[seed % len(cases)]
    scale = 1000.0 if not dtype.is_floating_point else 1.0
    x = randn(in_shape, gen, dtype, mode, scale=scale)
    index = torch.randint(0, in_shape[dim], index_shape, generator=gen, dtype=torch.int64)
    mask = torch.rand(mask_shape, generator=gen) < 0.3
    if not dtype.is_floating_point:
        value = int(value * 4)  # an integer fill value for integer tensors
    return Inputs((x, dim, index, mask, value))


def cost(inputs):
    x, dim, index, mask, _ = inputs.args
    # input elements that must be read: the distinct positions gathered where the mask is False
    d = dim % x.dim()
    positions = index * x.stride(d)
    for k in range(x.dim()):
        if k != d:
            shape = [1] * x.dim()
            shape[k] = index.shape[k]
            positions = positions + (torch.arange(index.shape[k]) * x.stride(k)).reshape(shape)
    read = torch.zeros(x.numel(), dtype=torch.bool)
    read[positions[~mask.expand(index.shape)]] = True
    return Cost(flops=0, bytes=element_bytes(index, mask) + (int(read.sum()) + index.numel()) * x.element_size())


TASK = Task(
    id="Fusion/fused_gather_masked_fill",
    difficulty=4,
    entry="fused_gather_masked_fill",
    signature="fused_gather_masked_fill(input, dim, index, mask, value, *, sparse_grad=False, out=None)",
    description=(
        "Gather, then masked fill: `index` is an int64 tensor with as many dims as `input`, no larger than `input` "
        "in any dim but `dim` (possibly negative), and the gathered G of index's shape has G[p] = input[p with its "
        "coordinate along dim replaced by index[p]] (for dim=1, G[i][j] = input[i][index[i][j]]). Every element "
        "of G where the boolean `mask` (broadcastable to G's shape) is True becomes the number `value` (converted "
        "to input's dtype). Return the result as a new tensor in input's dtype; `sparse_grad` does not change the "
        "values and `out` stays None. Values are only moved, so the result must match exactly."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.int32),
    contract=Exact(),
)
