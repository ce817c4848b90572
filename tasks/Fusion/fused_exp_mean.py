"""Element-wise exponential, then the mean over some dimensions (or all of them)."""

import math

import torch

from evaluator.task import Cost, Inputs, Task, generator, pick, randn


def reference(input, dim=None, keepdim=False, dtype=None, out=None):
    return torch.mean(torch.exp(input), dim=dim, keepdim=keepdim, dtype=dtype, out=out)


# (shape, dim, keepdim, float32 result?) per (size, seed): trailing dims as a tuple, a middle dim
# kept, everything (dim=None, a 0-dim result), a leading dim, non-adjacent dims. The standard size
# has one configuration.
CASES = {
    "small": [((8, 30, 50), (2, 1), False, False), ((6, 40, 10), 1, True, True)],
    "edge": [((3, 1, 1001), None, False, False), ((7, 3, 1, 5), (0, -1), True, True)],
    "standard": [((64, 1024, 1024), -1, False, False)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dim, keepdim, to_float32 = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode, scale=0.5)
    return Inputs((x,), {"dim": dim, "keepdim": keepdim, "dtype": torch.float32 if to_float32 else None})


def _reduced(shape, dim):
    if dim is None:
        return set(range(len(shape)))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return {d % len(shape) for d in dims}


def cost(inputs):
    (x,) = inputs.args
    dim = inputs.kwargs.get("dim")
    reduced = _reduced(x.shape, dim)
    out_numel = math.prod(s for d, s in enumerate(x.shape) if d not in reduced)
    out_dtype = inputs.kwargs.get("dtype") or x.dtype
    out_bytes = out_numel * torch.empty((), dtype=out_dtype).element_size()
    return Cost(flops=2 * x.numel(), bytes=x.numel() * x.element_size() + out_bytes)


TASK = Task(
    id="Fusion/fused_exp_mean",
    difficulty=3,
    entry="fused_exp_mean",
    signature="fused_exp_mean(input, dim=None, keepdim=False, dtype=None, out=None)",
    description=(
        "Return the mean of exp(input) over the dimensions in `dim`: an int, a tuple of ints (negative values "
        "count from the end; the listed dims need not be adjacent) or None for every dimension, which gives a "
        "0-dim result. With keepdim=True the reduced dims stay with size 1, otherwise they are removed. The "
        "result has dtype `dtype` when it is given (float32 here) and the input's dtype otherwise. Compute exp "
        "and the sum in float32 (an exp that overflows float32 gives inf, and so does the mean); `out` stays "
        "None."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
