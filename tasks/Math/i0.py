"""Elementwise modified Bessel function of the first kind, order zero."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# Shapes per (size, seed): 2-D and 3-D tensors, size-1 dims and odd lengths.
SHAPES = {
    "small": [(33, 257), (4, 50, 41)],
    "edge": [(3, 1001), (2, 1, 17, 5)],
    "standard": [(8192, 8192)],
}
SPECIAL = [0.0, -0.0, 1e-20, 12.0, -12.0, 40.0, 88.0, 90.0, 100.0]


def reference(input_tensor, out=None):
    return torch.special.i0(input_tensor, out=out)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shapes = pick(size, **SHAPES)
    # |x| mostly below 8 (I0(8) ~ 427); outliers (x50) run into overflow, which happens near |x| = 91.9
    # in float32 and much earlier in float16
    x = randn(shapes[seed % len(shapes)], gen, dtype, mode, scale=2.5)
    if size != "standard":
        flat = x.view(-1)
        values = SPECIAL + [float("nan")] * (seed % 2)  # NaN on odd seeds only
        flat[:len(values)] = torch.tensor(values, dtype=torch.float32).to(dtype)
    return Inputs((x,))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=60 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/i0",
    difficulty=2,
    entry="i0",
    signature="i0(input_tensor, out=None)",
    kernelbenchx_signature="i0(input, *, out=None)",
    description=(
        "Return I0(x) = sum over k >= 0 of (x^2 / 4)^k / (k!)^2, the zeroth-order modified Bessel function of "
        "the first kind, for every element x of the floating-point tensor `input_tensor`, as a new tensor with "
        "the input's shape and dtype. I0 is even, equals 1 at 0 and grows like exp(|x|) / sqrt(2 pi |x|): "
        "finite results beyond the dtype's range are +inf and NaN stays NaN, but values that fit must not "
        "overflow in an intermediate exp(|x|). Compute in float32 for half-precision inputs; if `out` is "
        "given, write the result into it and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
