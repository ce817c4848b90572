"""tanh(sqrt(x)), elementwise."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# At fixed positions: tanh(sqrt(+-0)) = 0, tanh(sqrt(+inf)) = 1, negative numbers and NaN give NaN.
SPECIALS = (0.0, -0.0, float("inf"), -2.0, float("nan"))


def reference(input, out=None):
    return torch.tanh(torch.sqrt(input), out=out)


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
    if seed % 2 and size != "standard":
        # only tiny arguments (sqrt(x) around 3e-4), where tanh(y) ~ y must stay accurate
        x = randn(shape, gen, torch.float32, mode, scale=1e-7).abs()
        # no +inf here: its result 1 would dominate the error scale of these tiny results
        return Inputs((with_specials(x, SPECIALS[:2] + SPECIALS[3:], keep_nan).to(dtype),))
    x = randn(shape, gen, torch.float32, mode, scale=2.0)
    if size == "standard":
        x = x.abs()  # in the domain apart from the special values
    # small and edge sizes keep both signs: negative values give NaN
    return Inputs((with_specials(x, SPECIALS, keep_nan).to(dtype),))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=4 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/sqrt_tanh",
    difficulty=3,
    entry="sqrt_tanh",
    signature="sqrt_tanh(input, out=None)",
    description=(
        "Return a new tensor with tanh(sqrt(x)) for every element x of `input`, same shape and dtype. "
        "Negative x and NaN give NaN, +-0 give 0 and +inf gives 1. Keep relative accuracy for small "
        "arguments (some evaluated inputs are all below about 1e-5, so tanh(y) ~ y must not come from "
        "cancellation such as 1 - 2/(exp(2y) + 1)). Compute in float32 for half-precision inputs; `out` is "
        "never passed (it stays None)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
