"""Polygamma function psi^(n)(x) of a positive tensor (n = 0 is digamma)."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(n, input, *, out=None):
    return torch.special.polygamma(n, input, out=out)


# (shape, n, smallest x, spread) per (size, seed): x = smallest + spread * |z| for normal z, so most
# values are a few units and outliers reach a few hundred; every order 0..4 is evaluated.
CASES = {
    "small": [((37, 300), 2, 0.2, 2.0), ((16, 50, 24), 0, 0.05, 3.0)],
    "edge": [((1001,), 3, 0.5, 3.0), ((3, 1, 7, 41), 4, 1.0, 4.0)],
    "standard": [((4096, 8192), 1, 0.1, 3.0)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, n, smallest, spread = cases[seed % len(cases)]
    x = randn(shape, gen, torch.float32, mode, scale=spread).abs() + smallest
    return Inputs((n, x.to(dtype)))


def cost(inputs):
    _, x = inputs.args
    return Cost(flops=60 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/polygamma",
    difficulty=4,
    entry="polygamma",
    signature="polygamma(n, input, *, out=None)",
    description=(
        "Return psi^(n)(x), the n-th derivative of the digamma function, for every element x of `input` (same "
        "shape and dtype); `n` is a Python int >= 0 (0 to 4 are evaluated) and every x is positive (from about "
        "0.05 to a few hundred). n = 0 is digamma, psi(x) = d/dx ln Gamma(x); for n >= 1, psi^(n)(x) = "
        "(-1)^(n+1) n! sum_{k>=0} (x+k)^-(n+1), a series too slow to sum directly: use the recurrence to shift "
        "x up and an asymptotic expansion (relative accuracy near float32's is expected; results beyond a half "
        "dtype's range become inf). Compute in float32 for half-precision inputs; `out` is never passed."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
