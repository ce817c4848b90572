"""Sum over some dimensions, then the standard deviation of all the sums (a single value)."""

import torch

from evaluator.task import Cost, Inputs, Task, generator, pick, randn


def reference(input, dim=None, keepdim=False, dtype=None, correction=1, out=None):
    sums = torch.sum(input, dim=dim, keepdim=keepdim, dtype=dtype)
    return torch.std(sums, correction=correction, keepdim=keepdim, out=out)


# Per (size, seed): (shape, dim, keepdim, float32 sums for half inputs?, correction): a middle dim, two
# non-adjacent dims, every dim (one sum), and trailing dims around a size-1 dim. The standard size has
# one configuration.
CASES = {
    "small": [((8, 300, 20), 1, False, False, 1), ((6, 40, 10), (0, 2), True, True, 0)],
    "edge": [((3, 1, 1001), None, True, False, 0), ((7, 3, 1, 5), (0, -1), False, True, 2)],
    "standard": [((64, 1280, 1024), 1, False, False, 1)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dim, keepdim, wide, correction = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode, shift=0.2)
    kwargs = {"dim": dim, "keepdim": keepdim, "correction": correction}
    if wide and dtype != torch.float32:
        kwargs["dtype"] = torch.float32
    return Inputs((x,), kwargs)


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=x.numel(), bytes=x.numel() * x.element_size() + 4)


TASK = Task(
    id="Fusion/fused_sum_std",
    difficulty=4,
    entry="fused_sum_std",
    signature="fused_sum_std(input, dim=None, keepdim=False, dtype=None, correction=1, out=None)",
    description=(
        "First sum `input` over `dim` (an int, a tuple of ints that need not be adjacent, negative allowed, or "
        "None for every dim), giving S with keepdim deciding whether the reduced dims stay as size 1. Then "
        "return the standard deviation of all n elements of S together: sqrt(sum((S - mean(S))**2) / "
        "max(0, n - correction)), a single value whose shape is () when keepdim is False and S's rank of "
        "1s when it is True. With `dtype` (float32 for half inputs) the input is converted first and the "
        "result has that dtype, otherwise the input's; accumulate in float32 with a stable variance. `out` "
        "is always None."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
