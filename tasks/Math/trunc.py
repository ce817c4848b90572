"""Elementwise rounding toward zero."""

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# At fixed positions: halves of both signs (2.5 -> 2, -2.5 -> -2, -0.5 -> -0), a value already
# integral in every dtype, infinities and NaN (returned unchanged).
SPECIALS = (0.5, -0.5, 2.5, -2.5, 1.0e7, float("inf"), float("-inf"), float("nan"))


def reference(input, out=None):
    return torch.trunc(input, out=out)


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
    # mostly non-integral values of both signs; outliers reach magnitudes where every value is integral
    x = randn(shape, gen, torch.float32, mode, scale=(4.0, 300.0)[seed % 2])
    return Inputs((with_specials(x, SPECIALS, keep_nan).to(dtype),))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/trunc",
    difficulty=1,
    entry="trunc",
    signature="trunc(input, out=None)",
    kernelbenchx_signature="trunc(input, *, out=None)",
    description=(
        "Return a new tensor, same shape and dtype as the floating tensor `input`, with every element rounded "
        "toward zero to an integral value (2.7 -> 2, -2.7 -> -2, -0.5 -> -0); values that are already "
        "integral, +-inf and NaN are returned unchanged. The result is exactly representable in the input "
        "dtype and is compared exactly. The keyword `out` is never passed (it stays None)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Exact(),
)
