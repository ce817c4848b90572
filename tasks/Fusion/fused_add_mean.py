"""Add a scaled tensor (or number) to the input, then take the mean over some dimensions."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, other, dim=None, alpha=1, keepdim=False, dtype=None, out=None):
    result = torch.mean(torch.add(input, other, alpha=alpha), dim=dim, keepdim=keepdim, dtype=dtype)
    if out is not None:
        out.copy_(result)
        return out
    return result


# Per size, the cases seeds rotate through: input shape, other (a shape, or a Python number), dim,
# alpha, keepdim, dtype (True: float32). The standard size has one configuration.
CASES = {
    "small": [((40, 1000), (40, 1000), None, 1, False, False),
              ((4, 33, 65), (65,), (0, 2), -0.5, True, True)],
    "edge": [((3, 1001), 0.75, 1, 2, False, False),
             ((1, 7, 1, 5), (7, 1, 1), (1, 2), 1.5, True, False)],
    "standard": [((8192, 8192), (8192, 8192), -1, 0.5, False, False)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, other, dim, alpha, keepdim, as_float32 = cases[seed % len(cases)]
    # shifted so that the means are not all close to zero
    x = randn(shape, gen, dtype, mode, shift=0.5)
    if isinstance(other, tuple):
        other = randn(other, gen, dtype, mode)
    return Inputs((x, other), {"dim": dim, "alpha": alpha, "keepdim": keepdim,
                               "dtype": torch.float32 if as_float32 else None})


def cost(inputs):
    x, other = inputs.args
    dim = inputs.kwargs.get("dim")
    if dim is None:
        reduced = x.numel()
    else:
        reduced = 1
        for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):
            reduced *= x.shape[d]
    out_dtype = inputs.kwargs.get("dtype") or x.dtype
    out_bytes = x.numel() // max(1, reduced) * out_dtype.itemsize
    return Cost(flops=3 * x.numel(), bytes=element_bytes(x, other) + out_bytes)


TASK = Task(
    id="Fusion/fused_add_mean",
    difficulty=4,
    entry="fused_add_mean",
    signature="fused_add_mean(input, other, dim=None, alpha=1, keepdim=False, dtype=None, out=None)",
    description=(
        "Form s = input + alpha * other, where `other` is a Python number or a tensor of the input's dtype that "
        "broadcasts to the input's shape, then return the arithmetic mean of s over `dim`: None reduces every "
        "element to a 0-dim tensor, an int or a tuple of ints (negative values count from the end) names the "
        "dimensions to reduce. keepdim=True keeps each reduced dimension with size 1. The result has dtype "
        "`dtype` when it is given (e.g. float32 for half inputs), else the input's dtype. Accumulate the sums in "
        "float32; if `out` is given, write the result into it and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
