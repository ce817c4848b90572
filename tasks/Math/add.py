"""Broadcasting addition with a scaled second operand: input + alpha * other."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# (input shape, other shape or None for a Python number, alpha, transposed input) per (size, seed):
# a row vector, broadcasting on both sides, a Python scalar, a 4-D case with size-1 dims, and a
# non-contiguous (transposed) input. The standard size has one configuration, so the seeds that
# rotate during timing share it.
CASES = {
    "small": [((37, 300), (300,), 1, True), ((16, 1, 40), (1, 30, 40), -0.5, False)],
    "edge": [((3, 1001), None, 2, False), ((2, 1, 17, 5), (7, 1, 1), 3, False)],
    "standard": [((8192, 8192), (8192,), 0.5, False)],
}


def reference(input, other, alpha=1, out=None):
    return torch.add(input, other, alpha=alpha, out=out)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, other_shape, alpha, transposed = cases[seed % len(cases)]
    if transposed:
        x = randn(tuple(reversed(shape)), gen, dtype, mode).t()
    else:
        x = randn(shape, gen, dtype, mode)
    other = 20.0 if other_shape is None else randn(other_shape, gen, dtype, mode, scale=2.0)
    kwargs = {} if alpha == 1 else {"alpha": alpha}
    return Inputs((x, other), kwargs)


def cost(inputs):
    x, other = inputs.args
    shape = torch.broadcast_shapes(x.shape, other.shape) if isinstance(other, torch.Tensor) else x.shape
    out_numel = torch.Size(shape).numel()
    return Cost(flops=2 * out_numel, bytes=element_bytes(x, other) + out_numel * x.element_size())


TASK = Task(
    id="Math/add",
    difficulty=4,
    entry="add",
    signature="add(input, other, alpha=1, out=None)",
    kernelbenchx_signature="add(input, other, *, alpha=1, out=None)",
    description=(
        "Return input + alpha * other, where `input` is a floating-point tensor and `other` is a tensor of "
        "the same dtype or a Python number, and `alpha` is a Python number. Tensors broadcast against each "
        "other as in NumPy (dimensions aligned from the right, size-1 dimensions stretched), so the result "
        "has the broadcast shape and the input's dtype; operands may be non-contiguous. Compute in float32 "
        "for half-precision data. If `out` is given, write the result into it and return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
