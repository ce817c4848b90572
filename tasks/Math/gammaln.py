"""Elementwise natural logarithm of the absolute value of the gamma function."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# Shapes per (size, seed): 2-D and 3-D tensors, size-1 dims and odd lengths.
SHAPES = {
    "small": [(33, 257), (4, 50, 41)],
    "edge": [(3, 1001), (2, 1, 17, 5)],
    "standard": [(8192, 8192)],
}
# poles (0, -0, negative integers), the zeros at 1 and 2, tiny and large arguments, infinities, NaN
SPECIAL = [0.0, -0.0, -1.0, -2.0, -7.0, 1.0, 2.0, 0.5, -0.5, 1e-6, 1e4, -2.5, float("inf"), -float("inf")]


def reference(input, out=None):
    return torch.special.gammaln(input, out=out)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shapes = pick(size, **SHAPES)
    # both signs: the positive axis with its zeros at 1 and 2, and negative non-integers between the poles
    x = randn(shapes[seed % len(shapes)], gen, dtype, mode, scale=4.0)
    if size != "standard":
        flat = x.view(-1)
        values = SPECIAL + [float("nan")] * (seed % 2)  # NaN on odd seeds only
        flat[:len(values)] = torch.tensor(values, dtype=torch.float32).to(dtype)
    return Inputs((x,))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=40 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/gammaln",
    difficulty=1,
    entry="gammaln",
    signature="gammaln(input, out=None)",
    kernelbenchx_signature="gammaln(input, *, out=None)",
    description=(
        "Return ln|Gamma(x)| for every element x of the floating-point tensor `input`, as a new tensor with "
        "the input's shape and dtype. Inputs cover the whole real line: negative non-integers (use the "
        "reflection Gamma(x) Gamma(1-x) = pi / sin(pi x)), the poles 0 and the negative integers (+inf), "
        "the zeros at x = 1 and 2 (where the absolute error must stay near float32 rounding), large "
        "arguments (no premature overflow), +-inf (+inf) and NaN (NaN). Compute in float32 for "
        "half-precision inputs; if `out` is given, write the result into it and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
