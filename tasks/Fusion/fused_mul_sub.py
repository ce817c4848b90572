"""Multiply the input by a tensor or number, then subtract a scaled tensor or number."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, other_mul, other_sub, alpha=1, out=None):
    return torch.sub(torch.mul(input, other_mul), other_sub, alpha=alpha, out=out)


# Per size, the cases seeds rotate through: input shape, other_mul and other_sub (a shape, or a
# Python number), alpha. The standard size has one configuration, so the timing seeds share it.
CASES = {
    "small": [((33, 257), (33, 257), (257,), 1),
              ((4, 33, 65), 1.5, (4, 1, 65), -0.5)],
    "edge": [((3, 1001), (1001,), 0.25, 2),
             ((7, 1, 5), (1, 4, 1), (7, 4, 5), 1)],   # the output (7, 4, 5) is larger than the input
    "standard": [((8192, 8192), (8192, 8192), (8192,), 0.5)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, mul, sub, alpha = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode)
    if isinstance(mul, tuple):
        mul = randn(mul, gen, dtype, mode)
    if isinstance(sub, tuple):
        sub = randn(sub, gen, dtype, mode)
    return Inputs((x, mul, sub), {"alpha": alpha})


def _shape(*values):
    dims = []
    for v in values:
        if isinstance(v, torch.Tensor):
            s = list(v.shape)
            dims = [1] * (len(s) - len(dims)) + dims if len(s) > len(dims) else dims
            s = [1] * (len(dims) - len(s)) + s
            dims = [max(a, b) for a, b in zip(dims, s)]
    return dims


def cost(inputs):
    x, mul, sub = inputs.args
    numel = 1
    for d in _shape(x, mul, sub):
        numel *= d
    return Cost(flops=3 * numel, bytes=element_bytes(x, mul, sub) + numel * x.element_size())


TASK = Task(
    id="Fusion/fused_mul_sub",
    difficulty=2,
    entry="fused_mul_sub",
    signature="fused_mul_sub(input, other_mul, other_sub, alpha=1, out=None)",
    description=(
        "Return input * other_mul - alpha * other_sub, element by element, as a new tensor in the input's dtype. "
        "`other_mul` and `other_sub` are each a Python number or a tensor of the input's dtype, and the three "
        "operands broadcast together under the usual rules (a trailing row vector, a (B, 1, W) slab, or a tensor "
        "with more or larger dims than `input`, which then enlarges the output); `alpha` is a number. Compute in "
        "float32 for half-precision inputs; if `out` is given, write the result into it and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
