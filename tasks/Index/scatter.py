"""Out-of-place scatter: write values of `src` into a copy of `input` at positions from `index`."""

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, dim, index, src):
    return input.scatter(dim, index, src)


# (input shape, dim, index shape, src shape) per (size, seed): the first, a middle and the last
# dim, negative dims, an index smaller than src in every dim, size-1 dims. The standard size has
# one configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((40, 64), 0, (25, 50), (30, 60)), ((8, 20, 30), 1, (6, 12, 25), (7, 16, 30))],
    "edge": [((3, 1001), -1, (2, 700), (3, 1001)), ((5, 1, 17, 3), -2, (4, 1, 9, 3), (5, 1, 10, 3))],
    "standard": [((8192, 8192), 1, (8192, 4096), (8192, 5000))],
}


def distinct_index(input_shape, dim, index_shape, gen):
    """An int64 index whose values along `dim` are distinct within every slice (a random
    permutation prefix), so no destination is written twice and the result is well defined."""
    d = dim % len(input_shape)
    # sort random keys along the last dim (stable: ties resolve the same way everywhere), then
    # move that dim into place
    shape = list(index_shape[:d]) + list(index_shape[d + 1:]) + [input_shape[d]]
    keys = torch.randint(0, 2**31 - 1, shape, generator=gen, dtype=torch.int32)
    perm = keys.argsort(dim=-1, stable=True)[..., :index_shape[d]]
    return perm.movedim(-1, d).contiguous()


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    in_shape, dim, index_shape, src_shape = cases[seed % len(cases)]
    scale = 1000.0 if not dtype.is_floating_point else 1.0
    x = randn(in_shape, gen, dtype, mode, scale=scale)
    src = randn(src_shape, gen, dtype, mode, scale=scale, shift=3.0 * scale)
    index = distinct_index(in_shape, dim, index_shape, gen)
    return Inputs((x, dim, index, src))


def cost(inputs):
    x, _, index, src = inputs.args
    return Cost(flops=0, bytes=2 * element_bytes(x) + element_bytes(index) + index.numel() * src.element_size())


TASK = Task(
    id="Index/scatter",
    difficulty=3,
    entry="scatter",
    signature="scatter(input, dim, index, src)",
    description=(
        "Return a new tensor equal to `input` except that, for every position p of the int64 tensor `index` "
        "(same rank as `input`), the element at p with its coordinate along `dim` replaced by index[p] is "
        "set to src[p]; e.g. for dim=0, out[index[i][j]][j] = src[i][j]. `index` may be smaller than `src` "
        "in any dim and smaller than `input` in every dim but `dim`; only the elements of `src` at positions "
        "of `index` are used. `dim` may be negative; `input` must not be modified, and the result has its "
        "shape and dtype. The indices are distinct along `dim` within each slice, so no element is written twice."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.int32),
    contract=Exact(),
)
