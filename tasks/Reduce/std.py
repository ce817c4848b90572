"""Standard deviation over one or several dimensions (or all), with a degrees-of-freedom correction."""

import math

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, dim=None, correction=1, keepdim=False, out=None):
    return torch.std(input, dim=dim, correction=correction, keepdim=keepdim, out=out)


# (shape, dim, correction, keepdim) per (size, seed): the whole tensor, two dims apart, a middle
# dim with a size-1 dim, a leading dim; corrections 0, 1 and 2. The inputs have a mean well away
# from 0, which punishes the one-pass E[x^2] - E[x]^2 formula. The standard size has one
# configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((64, 100), None, 1, False), ((12, 40, 10), (0, 2), 0, True)],
    "edge": [((3, 1, 17, 5), 2, 2, False), ((1001, 3), 0, 1, True)],
    "standard": [((8192, 8192), None, 1, False)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dim, correction, keepdim = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode, scale=0.25, shift=10.0)
    return Inputs((x,), {"dim": dim, "correction": correction, "keepdim": keepdim})


def cost(inputs):
    (x,) = inputs.args
    dim = inputs.kwargs.get("dim")
    if dim is None:
        out_numel = 1
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        reduced = {d % x.dim() for d in dims}
        out_numel = math.prod(s for d, s in enumerate(x.shape) if d not in reduced)
    return Cost(flops=4 * x.numel(), bytes=element_bytes(x) + out_numel * x.element_size())


TASK = Task(
    id="Reduce/std",
    difficulty=2,
    entry="std",
    signature="std(input, dim=None, correction=1, keepdim=False, out=None)",
    kernelbenchx_signature="std(input, dim=None, *, correction=1, keepdim=False, out=None)",
    description=(
        "Standard deviation of the elements of `input` over `dim` (an int, a tuple of ints in any order, "
        "negative values counting from the end, or None for all elements): sqrt(sum((x - mean)**2) / "
        "max(0, N - correction)), with N the number of reduced elements and `correction` an int (1 is Bessel's "
        "correction, 0 the population value). With keepdim=True the reduced dims stay with size 1, otherwise "
        "they are removed (dim=None without keepdim gives a 0-dim tensor). The result has the input's dtype; "
        "accumulate in float32 with a numerically stable method (the data may have a large mean); `out` is "
        "always None."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
