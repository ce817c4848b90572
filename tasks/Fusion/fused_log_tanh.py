"""Natural logarithm of a positive tensor, then the hyperbolic tangent of the result."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, out=None):
    return torch.tanh(torch.log(input), out=out)


# Per size, the shapes seeds rotate through; the standard size has one shape.
SHAPES = {
    "small": [(33, 257), (4, 9, 130)],
    "edge": [(1,), (3, 1, 1001)],
    "standard": [(8192, 8192)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shapes = pick(size, **SHAPES)
    shape = shapes[seed % len(shapes)]
    # |N(0, 1.5)| + 0.02: positive, spanning tanh(log x)'s whole range (-1 near 0, 0 at 1, 1 above);
    # outliers reach a few hundred.
    x = randn(shape, gen, torch.float32, mode, scale=1.5).abs() + 0.02
    if size == "edge":
        flat = x.reshape(-1)
        flat[:: 7] = 0.0          # log(0) = -inf, so the result is exactly -1
        flat[3:: 11] = 1.0        # log(1) = 0
    return Inputs((x.to(dtype),))


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=4 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Fusion/fused_log_tanh",
    difficulty=1,
    entry="fused_log_tanh",
    signature="fused_log_tanh(input, out=None)",
    description=(
        "Return tanh(log(x)) for every element x of `input`, a tensor of any shape with non-negative values, as "
        "a new tensor of the same shape and dtype. A zero element gives log = -inf and therefore -1; a negative "
        "one would give NaN. Note that tanh(log(x)) equals (x*x - 1) / (x*x + 1) for x > 0. Compute in float32 for "
        "half-precision inputs; if `out` is given, write the result into it and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
