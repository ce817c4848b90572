"""Elementwise product with broadcasting; the second factor may be a Python number."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, randn


def reference(input, other, out=None):
    return torch.mul(input, other, out=out)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    if size == "standard":
        shapes = ((8192, 8192), (8192, 8192))
    elif size == "small":
        # a row vector broadcast over rows; a Python float
        shapes = (((37, 300), (300,)), ((16, 50, 24), 2.5))[seed % 2]
    else:
        # both operands broadcast, (2,3,1,5) x (3,4,1) -> (2,3,4,5); a 0-dim tensor
        shapes = (((2, 3, 1, 5), (3, 4, 1)), ((1001,), ()))[seed % 2]
    a_shape, b_shape = shapes
    a = randn(a_shape, gen, dtype, mode)
    b = b_shape if isinstance(b_shape, float) else randn(b_shape, gen, dtype, mode)
    return Inputs((a, b))


def cost(inputs):
    a, b = inputs.args
    out_numel = torch.broadcast_shapes(a.shape, getattr(b, "shape", ())).numel()
    return Cost(flops=out_numel, bytes=element_bytes(a, b) + out_numel * a.element_size())


TASK = Task(
    id="Math/mul",
    difficulty=3,
    entry="mul",
    signature="mul(input, other, out=None)",
    kernelbenchx_signature="mul(input, other, *, out=None)",
    description=(
        "Return input * other elementwise as a new tensor. `input` is a floating tensor; `other` is a tensor "
        "of the same dtype or a Python number (int or float). Tensor operands broadcast like NumPy (align "
        "trailing dimensions; size-1 or missing dimensions stretch), so the result has the broadcast shape, "
        "which may be larger than either operand's (up to 4 dimensions; a 0-dim tensor acts as a scalar), "
        "and input's dtype. Multiply in float32 for half-precision inputs; the keyword `out` is never passed "
        "(it stays None)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
