"""Elementwise reciprocal square root 1 / sqrt(x)."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# At fixed positions: rsqrt(+0) = +inf, rsqrt(-0) = -inf, negative numbers and NaN give NaN,
# rsqrt(+inf) = 0.
SPECIALS = (0.0, -0.0, -1.0, float("inf"), float("nan"))


def reference(input, out=None):
    return torch.rsqrt(input, out=out)


def with_specials(x, values, keep_nan):
    if not keep_nan:
        values = tuple(v for v in values if v == v and not isinstance(v, str))
    flat = x.reshape(-1).clone()
    count = min(len(values), flat.numel())
    where = torch.tensor([i * (flat.numel() - 1) // max(count - 1, 1) for i in range(count)])
    flat[where] = torch.tensor(values[:count], dtype=torch.float32).to(x.dtype)
    return flat.reshape(x.shape)


# NaN inputs appear in odd seeds and at standard size only: the suite's determinism check compares
# seed 0's small and edge inputs with torch.equal, for which NaN never equals itself.
def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    keep_nan = seed % 2 == 1 or size == "standard"
    shape = pick(size, small=(37, 300), standard=(8192, 8192), edge=((1001,), (3, 1, 7, 41))[seed % 2])
    x = randn(shape, gen, torch.float32, mode, scale=2.0)
    if seed % 2 == 0:
        x = x.abs()  # in the domain apart from the special values
    # odd seeds keep both signs: about half the results are NaN
    return Inputs((with_specials(x, SPECIALS, keep_nan).to(dtype),))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=2 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/rsqrt",
    difficulty=1,
    entry="rsqrt",
    signature="rsqrt(input, out=None)",
    kernelbenchx_signature="rsqrt(input, *, out=None)",
    description=(
        "Return a new tensor with 1 / sqrt(x) for every element x of `input`, same shape and dtype. "
        "Non-finite cases are evaluated and follow IEEE rules: +0 gives +inf, -0 gives -inf, negative numbers "
        "and NaN give NaN, +inf gives 0 (some inputs hold negative values at random). Compute in float32 for "
        "half-precision inputs; the keyword `out` is never passed (it stays None)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
