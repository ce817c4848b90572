"""Sign bits of a floating tensor, and its integer conversion bitwise-ANDed with an integer tensor."""

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input: torch.Tensor, other: torch.Tensor):
    return torch.signbit(input), torch.bitwise_and(input.to(other.dtype), other)


# (shape, other's dtype, scale of input, clamp) per (size, seed): the clamp keeps every truncated
# input value inside other's range (float-to-integer conversion out of range is undefined).
CASES = {
    "small": [((37, 300), torch.int32, 100.0, 60000.0), ((16, 50, 24), torch.int8, 30.0, 127.0)],
    "edge": [((1001,), torch.bool, 1.0, None), ((3, 1, 7, 41), torch.int16, 1000.0, 32000.0)],
    "standard": [((8192, 8192), torch.int32, 100.0, 60000.0)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, other_dtype, scale, bound = cases[seed % len(cases)]
    x = randn(shape, gen, torch.float32, mode, scale=scale)
    if bound is not None:
        x = x.clamp(-bound, bound)
    flat = x.reshape(-1)
    # signed zeros and values in (-1, 0), whose sign bit is set but whose integer value is 0
    count = max(1, flat.numel() // 50)
    for value in (-0.0, 0.0, -0.75):
        flat[torch.randint(0, flat.numel(), (count,), generator=gen)] = value
    x = flat.reshape(shape).to(dtype)
    if other_dtype == torch.bool:
        other = torch.randint(0, 2, shape, generator=gen).bool()
    else:
        info = torch.iinfo(other_dtype)
        other = torch.randint(info.min, info.max, shape, generator=gen, dtype=torch.int64).to(other_dtype)
    return Inputs((x, other))


def cost(inputs):
    x, other = inputs.args
    return Cost(flops=2 * x.numel(), bytes=element_bytes(x) + 2 * element_bytes(other) + x.numel())


TASK = Task(
    id="Math/signbit_bitwise_and",
    difficulty=1,
    entry="signbit_bitwise_and",
    signature="signbit_bitwise_and(input: torch.Tensor, other: torch.Tensor)",
    description=(
        "`input` is a floating tensor and `other` a tensor of the same shape with an integer dtype (int8, "
        "int16, int32 or int64) or torch.bool. Return a tuple: a torch.bool tensor that is True where the "
        "sign bit of `input` is set (negative values and -0.0 included), and the bitwise AND of `input` "
        "converted to other's dtype with `other`, in other's dtype. The conversion truncates toward zero (for "
        "bool it is x != 0); the evaluated inputs always fit other's range and contain no NaN. Both results "
        "are compared exactly."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Exact(),
)
