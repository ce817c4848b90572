"""Elementwise input - alpha * other with broadcasting; other may be a Python number."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, randn


def reference(input, other, *, alpha=1, out=None):
    return torch.sub(input, other, alpha=alpha, out=out)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    if size == "standard":
        a_shape, b_shape, alpha = (8192, 8192), (8192, 8192), 2
    elif size == "small":
        # a row vector broadcast over rows; a Python int with a float alpha
        a_shape, b_shape, alpha = (((37, 300), (300,), 1), ((16, 50, 24), 3, 2.5))[seed % 2]
    else:
        # both operands broadcast, (3,1,5) - (2,1,7,1) -> (2,3,7,5); a 0-dim tensor
        a_shape, b_shape, alpha = (((3, 1, 5), (2, 1, 7, 1), -0.5), ((1001,), (), 2))[seed % 2]
    a = randn(a_shape, gen, dtype, mode)
    b = b_shape if isinstance(b_shape, int) else randn(b_shape, gen, dtype, mode)
    return Inputs((a, b), {"alpha": alpha})


def cost(inputs):
    a, b = inputs.args
    out_numel = torch.broadcast_shapes(a.shape, getattr(b, "shape", ())).numel()
    return Cost(flops=2 * out_numel, bytes=element_bytes(a, b) + out_numel * a.element_size())


TASK = Task(
    id="Math/sub",
    difficulty=2,
    entry="sub",
    signature="sub(input, other, *, alpha=1, out=None)",
    description=(
        "Return input - alpha * other elementwise as a new tensor. `input` is a floating tensor; `other` is a "
        "tensor of the same dtype or a Python number, and `alpha` a Python int or float. Tensor operands "
        "broadcast like NumPy (trailing dimensions aligned, size-1 or missing dimensions stretched), so the "
        "result has the broadcast shape, possibly larger than either operand's (up to 4 dimensions; a 0-dim "
        "tensor acts as a scalar), and input's dtype. Compute in float32 for half-precision inputs; the "
        "keyword `out` is never passed (it stays None)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
