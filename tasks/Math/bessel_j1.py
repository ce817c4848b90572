"""Elementwise Bessel function of the first kind, order one."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# Shapes per (size, seed): 2-D and 3-D tensors, size-1 dims and odd lengths.
SHAPES = {
    "small": [(33, 257), (4, 50, 41)],
    "edge": [(3, 1001), (2, 1, 17, 5)],
    "standard": [(8192, 8192)],
}
# zero (both signs), the first zeros 3.8317 and 7.0156, the switch-over region around 5, tiny and
# large arguments, NaN
SPECIAL = [0.0, -0.0, 3.8317060, -7.0155867, 5.0, 4.9999995, 1e-20, 1e4, -3e5]


def reference(input, out=None):
    return torch.special.bessel_j1(input, out=out)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shapes = pick(size, **SHAPES)
    # a few oscillations on either side of zero; outliers (x50) reach |x| ~ 1000, where the phase
    # x - 3 pi / 4 must be reduced accurately
    x = randn(shapes[seed % len(shapes)], gen, dtype, mode, scale=6.0)
    if size != "standard":
        flat = x.view(-1)
        values = SPECIAL + [float("nan")] * (seed % 2)  # NaN on odd seeds only
        flat[:len(values)] = torch.tensor(values, dtype=torch.float32).to(dtype)
    return Inputs((x,))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=50 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/bessel_j1",
    difficulty=3,
    entry="bessel_j1",
    signature="bessel_j1(input, out=None)",
    kernelbenchx_signature="bessel_j1(input, *, out=None)",
    description=(
        "Return J1(x), the first-kind Bessel function of order one, for every element x of the float32 "
        "tensor `input`, as a new float32 tensor of the same shape. J1 is odd, J1(0) = 0, and for large |x| "
        "it oscillates as sqrt(2 / (pi x)) cos(x - 3 pi / 4) with decaying amplitude; inputs reach |x| of "
        "several hundred, so the oscillating phase must stay accurate there, and values near the zeros of "
        "J1 must be accurate in absolute terms. NaN stays NaN; if `out` is given, write the result into it "
        "and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
