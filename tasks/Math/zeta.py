"""Hurwitz zeta function zeta(x, q) = sum_k (k + q)^-x, elementwise with broadcasting."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, other, out=None):
    return torch.special.zeta(input, other, out=out)


# (shape of x or a Python number, shape of q or a Python number, smallest q) per (size, seed).
# x = 1.1 + 2|z| (in (1.1, about 12)); q = smallest + 2|z| with outliers reaching a few hundred.
CASES = {
    "small": [((24, 200), (24, 200), 0.5), (2, (8, 30, 24), 0.05)],
    "edge": [((1001,), 1.0, None), ((5, 1, 41), (7, 1), 0.2)],
    "standard": [((4096, 8192), (4096, 8192), 0.1)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    x_shape, q_shape, smallest = cases[seed % len(cases)]
    x = x_shape
    if isinstance(x_shape, tuple):
        # outliers only in q: x stays in (1.1, ~12), where float32 results neither overflow nor vanish
        x = (randn(x_shape, gen, torch.float32, "standard", scale=2.0).abs() + 1.1).to(dtype)
    q = q_shape
    if isinstance(q_shape, tuple):
        q = (randn(q_shape, gen, torch.float32, mode, scale=2.0).abs() + smallest).to(dtype)
    return Inputs((x, q))


def cost(inputs):
    x, q = inputs.args
    out_numel = torch.broadcast_shapes(getattr(x, "shape", ()), getattr(q, "shape", ())).numel()
    out_size = (x if isinstance(x, torch.Tensor) else q).element_size()
    return Cost(flops=100 * out_numel, bytes=element_bytes(x, q) + out_numel * out_size)


TASK = Task(
    id="Math/zeta",
    difficulty=3,
    entry="zeta",
    signature="zeta(input, other, out=None)",
    kernelbenchx_signature="zeta(input, other, *, out=None)",
    description=(
        "Hurwitz zeta function: return zeta(x, q) = sum_{k>=0} (k + q)^-x elementwise, x from `input` and q "
        "from `other` (q = 1 gives the Riemann zeta function). Each is a float32 tensor or a Python number "
        "(at least one a tensor); tensors broadcast like NumPy (up to 4 dimensions) and the result is float32 "
        "with the broadcast shape. Evaluated values satisfy x > 1 (about 1.1 to 12) and q > 0 (about 0.05 to a "
        "few hundred); the series converges too slowly to sum directly, so sum a few terms and add an "
        "Euler-Maclaurin tail, aiming at float32 relative accuracy. `out` is never passed (it stays None)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
