"""Broadcasting bitwise AND of integer or boolean tensors."""

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick

# (input shape, other shape) per (size, seed): a row vector, broadcasting on both sides, equal shapes,
# and a 4-D case with size-1 dims. The standard size has one configuration, so the seeds that rotate
# during timing share it.
CASES = {
    "small": [((37, 300), (300,)), ((16, 1, 40), (1, 30, 40))],
    "edge": [((3, 1001), (3, 1001)), ((2, 1, 17, 5), (7, 1, 1))],
    "standard": [((8192, 8192), (8192, 8192))],
}
OUTLIER_FRACTION = 0.001


def reference(input, other, out=None):
    return torch.bitwise_and(input, other, out=out)


def _random_bits(shape, gen, dtype, mode):
    """Uniform over every bit pattern of `dtype`; in outlier mode 0.1% of the elements are replaced by
    the extremes of the type (minimum, maximum, -1, 0)."""
    if dtype == torch.bool:
        x = torch.randint(0, 2, shape, generator=gen).bool()
    else:
        info = torch.iinfo(dtype)
        high = info.max + 1 if info.bits < 64 else info.max
        x = torch.randint(info.min, high, shape, generator=gen, dtype=torch.int64).to(dtype)
    if mode == "outlier":
        flat = x.reshape(-1).clone()
        count = max(1, round(flat.numel() * OUTLIER_FRACTION))
        picked = torch.randint(0, flat.numel(), (count,), generator=gen)
        if dtype == torch.bool:
            extremes = torch.tensor([True, False])
        else:
            info = torch.iinfo(dtype)
            extremes = torch.tensor([info.min, info.max, -1 if info.min < 0 else 0, 0], dtype=dtype)
        flat[picked] = extremes[torch.randint(0, len(extremes), (count,), generator=gen)]
        x = flat.reshape(shape)
    return x


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, other_shape = cases[seed % len(cases)]
    return Inputs((_random_bits(shape, gen, dtype, mode), _random_bits(other_shape, gen, dtype, mode)))


def cost(inputs):
    x, other = inputs.args
    out_numel = torch.Size(torch.broadcast_shapes(x.shape, other.shape)).numel()
    return Cost(flops=out_numel, bytes=element_bytes(x, other) + out_numel * x.element_size())


TASK = Task(
    id="Math/bitwise_and",
    difficulty=2,
    entry="bitwise_and",
    signature="bitwise_and(input, other, out=None)",
    kernelbenchx_signature="bitwise_and(input, other, *, out=None)",
    description=(
        "Return the bitwise AND of two tensors of the same integer dtype (int32, int64, uint8) or of two bool "
        "tensors (logical AND), computed on the two's-complement bit patterns, so negative values and the "
        "extremes of the type are handled as plain bits. The tensors broadcast against each other as in "
        "NumPy; the result has the broadcast shape and the inputs' dtype and must match exactly. If `out` "
        "is given, write the result into it and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.int32, torch.int64, torch.uint8, torch.bool),
    contract=Exact(),
)
