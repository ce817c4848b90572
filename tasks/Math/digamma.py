"""Elementwise digamma function, the logarithmic derivative of the gamma function."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, with_outliers

# Shapes per (size, seed): 2-D and 3-D tensors, size-1 dims and odd lengths.
SHAPES = {
    "small": [(33, 257), (4, 50, 41)],
    "edge": [(3, 1001), (2, 1, 17, 5)],
    "standard": [(8192, 8192)],
}
# +0 (-inf), -0 (+inf), negative integers (NaN), the root near 1.4616, tiny and huge arguments,
# infinities and NaN
SPECIAL = [0.0, -0.0, -1.0, -3.0, 1.0, 1.4616321, 0.5, -0.5, 1e-6, 1e6, float("inf")]


def reference(input_tensor):
    return torch.special.digamma(input_tensor)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shapes = pick(size, **SHAPES)
    shape = shapes[seed % len(shapes)]
    if seed % 2 == 0:
        # positive arguments spread over several orders of magnitude (about 0.03 to 30)
        x = torch.exp(randn(shape, gen, torch.float32, "standard", scale=1.2))
    else:
        # both signs; negative values keep at least 0.05 from the poles at the non-positive integers so
        # that a few huge values near a pole do not dominate the tolerance of the rest
        x = randn(shape, gen, torch.float32, "standard", scale=3.0)
        whole = torch.floor(x)
        x = torch.where(x < 0, whole + 0.05 + 0.9 * (x - whole), x)
    if mode == "outlier":
        x = with_outliers(x, gen)
    if size != "standard":
        values = SPECIAL + [float("nan")] * (seed % 2)  # NaN on odd seeds only
        x.view(-1)[:len(values)] = torch.tensor(values)
    return Inputs((x.to(dtype),))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=30 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/digamma",
    difficulty=2,
    entry="digamma",
    signature="digamma(input_tensor)",
    kernelbenchx_signature="digamma(input, *, out=None)",
    description=(
        "Return psi(x) = d/dx ln Gamma(x) for every element x of the floating-point tensor `input_tensor`, as "
        "a new tensor with the input's shape and dtype. Positive arguments range from tiny to very large; "
        "negative non-integers follow the reflection psi(x) = psi(1 - x) - pi / tan(pi x). Special values: +0 "
        "gives -inf, -0 gives +inf, negative integers give NaN, +inf gives +inf, NaN stays NaN. Compute in "
        "float32 for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
