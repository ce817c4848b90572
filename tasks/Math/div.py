"""Broadcasting division, true or rounded toward zero or toward -inf."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, uniform, with_outliers

# (input shape, other shape or None for a Python number, rounding_mode, transposed input) per
# (size, seed): a row vector, broadcasting on both sides, a Python scalar, a 4-D case with size-1 dims
# and zero divisors, and a non-contiguous (transposed) input. The standard size has one configuration,
# so the seeds that rotate during timing share it.
CASES = {
    "small": [((37, 300), (300,), None, True), ((16, 1, 40), (1, 30, 40), "floor", False)],
    "edge": [((3, 1001), None, "trunc", False), ((2, 1, 17, 5), (7, 1, 1), "floor", False)],
    "standard": [((8192, 8192), (8192, 8192), "floor", False)],
}
SCALAR_DIVISOR = -0.7
# (dividend, divisor) pairs written at the start of the small floor case: exact multiples, signs
# differing, tiny quotients, a quotient that rounds up to an integer in float32, zero divisors
EXACT_PAIRS = [(6.0, 2.0), (-6.0, 2.0), (7.0, -2.0), (-7.0, -2.0), (0.5, 0.25), (-0.5, 0.25),
               (1e-30, 1.0), (-1e-30, 1.0), (0.3, 0.1), (-0.3, 0.1), (2.0, 0.0), (-2.0, 0.0), (0.0, 0.0),
               (8.766407012939453, 1.2523438930511475)]  # float32 a / b rounds up to 7; the floor is 6


def reference(input, other, rounding_mode=None, out=None):
    return torch.div(input, other, rounding_mode=rounding_mode, out=out)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, other_shape, rounding_mode, transposed = cases[seed % len(cases)]
    x = torch.randn(tuple(reversed(shape)) if transposed else shape, generator=gen) * 8.0
    if transposed:
        x = x.t()
    if other_shape is None:
        other = SCALAR_DIVISOR
    else:
        # divisors of either sign, with magnitudes in [0.5, 3]
        sign = torch.where(torch.rand(other_shape, generator=gen) < 0.5, -1.0, 1.0)
        other = uniform(other_shape, gen, torch.float32, 0.5, 3.0) * sign
    if mode == "outlier":
        x = with_outliers(x, gen)
        if isinstance(other, torch.Tensor):
            other = with_outliers(other, gen)
    if size == "small" and rounding_mode == "floor":
        pairs = torch.tensor(EXACT_PAIRS)
        x.view(-1)[:len(pairs)] = pairs[:, 0]
        other.view(-1)[:len(pairs)] = pairs[:, 1]
    if size == "edge" and isinstance(other, torch.Tensor):
        other.view(-1)[:2] = 0.0  # zero divisors: +-inf (or NaN for 0/0) in every mode
    x = x.to(dtype)
    if isinstance(other, torch.Tensor):
        other = other.to(dtype)
    kwargs = {} if rounding_mode is None else {"rounding_mode": rounding_mode}
    return Inputs((x, other), kwargs)


def cost(inputs):
    x, other = inputs.args
    shape = torch.broadcast_shapes(x.shape, other.shape) if isinstance(other, torch.Tensor) else x.shape
    out_numel = torch.Size(shape).numel()
    flops = out_numel * (1 if inputs.kwargs.get("rounding_mode") is None else 4)
    return Cost(flops=flops, bytes=element_bytes(x, other) + out_numel * x.element_size())


TASK = Task(
    id="Math/div",
    difficulty=3,
    entry="div",
    signature="div(input, other, rounding_mode=None, out=None)",
    kernelbenchx_signature="div(input, other, *, rounding_mode=None, out=None)",
    description=(
        "Return input / other, where `input` is a floating-point tensor and `other` a tensor of the same dtype "
        "or a Python number; tensors broadcast against each other as in NumPy and may be non-contiguous, and "
        "the result has the broadcast shape and the input's dtype. rounding_mode=None is true division; "
        "'trunc' rounds the float quotient toward zero; 'floor' returns the exact floor of the real quotient "
        "(so fl(a / b) rounding up to an integer must not push the result one too high, as Python's // "
        "guarantees). A zero divisor gives a / b (+-inf, or NaN for 0/0) in every mode; compute in float32 for "
        "half-precision data, and if `out` is given, write the result into it and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
