"""Elementwise Airy function Ai."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# Shapes per (size, seed): 2-D and 3-D tensors, size-1 dims and odd lengths.
SHAPES = {
    "small": [(33, 257), (4, 50, 41)],
    "edge": [(3, 1001), (2, 1, 17, 5)],
    "standard": [(8192, 8192)],
}
# the region boundaries at +-2.09, zero, the first zero -2.3381, decay to 0 (and underflow) for large
# x, tiny values, NaN
SPECIAL = [0.0, -0.0, 2.09, -2.09, 2.0899999, -2.0899999, -2.3381074, 8.3203353, 30.0, 110.0, 1e-20]


def reference(input, out=None):
    return torch.special.airy_ai(input, out=out)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shapes = pick(size, **SHAPES)
    # oscillation for x < 0 and decay for x > 0; outliers (x50) reach x ~ -600, where the phase
    # 2/3 |x|^(3/2) is in the thousands and must be reduced accurately
    x = randn(shapes[seed % len(shapes)], gen, dtype, mode, scale=3.0)
    if size != "standard":
        flat = x.view(-1)
        values = SPECIAL + [float("nan")] * (seed % 2)  # NaN on odd seeds only
        flat[:len(values)] = torch.tensor(values, dtype=torch.float32).to(dtype)
    return Inputs((x,))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=80 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/airy_ai",
    difficulty=4,
    entry="airy_ai",
    signature="airy_ai(input, out=None)",
    kernelbenchx_signature="airy_ai(input, *, out=None)",
    description=(
        "Return the Airy function Ai(x), the solution of y'' = x y that decays as x -> +inf, for every element "
        "of the float32 tensor `input`, as a new float32 tensor of the same shape. For x > 0 it falls like "
        "exp(-2/3 x^(3/2)) (underflowing to 0 far out); for x < 0 it oscillates with amplitude "
        "|x|^(-1/4) / sqrt(pi) and phase 2/3 |x|^(3/2) + pi/4, and inputs reach x of several hundred below "
        "zero, so that phase (in the thousands) must be reduced accurately; values near the zeros must be "
        "accurate in absolute terms. NaN stays NaN; if `out` is given, write the result into it and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
