"""Matrix-vector product, sigmoid, then subtraction of a scaled tensor or number."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, vec, other, alpha=1, *, out=None):
    s = torch.sigmoid(torch.mv(input, vec))
    return torch.sub(s, other, alpha=alpha, out=out)


# Per size, the cases seeds rotate through: (n, m), other (a shape, or a Python number), alpha, and
# whether `input` arrives as a transposed (column-major) view. The standard size has one configuration.
CASES = {
    "small": [((64, 96), (64,), 1, False), ((33, 130), 0.25, 2, False)],
    "edge": [((1, 7), (1,), -1, False), ((37, 1001), (), 0.5, True)],
    "standard": [((8192, 8192), (8192,), 1, False)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    (n, m), other, alpha, transposed = cases[seed % len(cases)]
    if transposed:
        a = randn((m, n), gen, dtype, mode).t()
    else:
        a = randn((n, m), gen, dtype, mode)
    vec = randn((m,), gen, dtype, mode, scale=1.5 / m ** 0.5)
    if isinstance(other, tuple):
        other = randn(other, gen, dtype, mode, scale=0.5)
    return Inputs((a, vec, other), {"alpha": alpha})


def cost(inputs):
    a, vec, other = inputs.args
    n, m = a.shape
    return Cost(flops=2 * n * m + 6 * n, bytes=element_bytes(a, vec, other) + n * a.element_size())


TASK = Task(
    id="Fusion/fused_mv_sigmoid_sub",
    difficulty=2,
    entry="fused_mv_sigmoid_sub",
    signature="fused_mv_sigmoid_sub(input, vec, other, alpha=1, *, out=None)",
    description=(
        "Given a matrix `input` (n, m) and a vector `vec` (m,), compute z = input @ vec, then return "
        "sigmoid(z) - alpha * other as a new (n,) tensor in the input's dtype. `other` is a Python number or a "
        "tensor that broadcasts to (n,) (shape (n,), (1,) or 0-dim); `alpha` is a number. `input` may be a "
        "non-contiguous view (e.g. a transpose), so honour its strides. Accumulate the dot products in float32 "
        "for half-precision inputs; if `out` is given, write the result into it and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
