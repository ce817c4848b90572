"""Concatenate tensors horizontally, then divide by a broadcast divisor with optional rounding."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(tensors, divisor, *, rounding_mode=None, out=None):
    stacked = torch.hstack(tensors)
    result = torch.div(stacked, divisor, rounding_mode=rounding_mode)
    if out is not None:
        out.copy_(result)
        return out
    return result


# (shapes of the stacked tensors, divisor: "full", "scalar" or a shape that broadcasts, rounding mode)
# per (size, seed): 2-D, 1-D (joined along dim 0) and 3-D tensors, a single tensor, size-1 dims.
# The standard size has one configuration.
CASES = {
    "small": [([(64, 30), (64, 50), (64, 1)], "full", None), ([(100,), (37,), (250,)], "scalar", "floor")],
    "edge": [([(3, 1, 5), (3, 7, 5)], (8, 1), "trunc"), ([(1, 1001)], (1001,), "floor")],
    "standard": [([(4096, 4096), (4096, 2048), (4096, 2048)], "full", "floor")],
}


def _stacked_shape(shapes):
    if len(shapes[0]) == 1:
        return (sum(s[0] for s in shapes),)
    first = shapes[0]
    return (first[0], sum(s[1] for s in shapes)) + tuple(first[2:])


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shapes, divisor_kind, rounding_mode = cases[seed % len(cases)]
    tensors = [randn(shape, gen, dtype, mode, scale=2.0) for shape in shapes]
    if divisor_kind == "scalar":
        divisor = -1.75
    else:
        shape = _stacked_shape(shapes) if divisor_kind == "full" else divisor_kind
        # magnitudes in [0.5, 2) with random signs: no division by (nearly) zero
        sign = torch.where(torch.rand(shape, generator=gen) < 0.5, -1.0, 1.0)
        divisor = (uniform(shape, gen, torch.float32, 0.5, 2.0) * sign).to(dtype)
    return Inputs((tensors, divisor), {"rounding_mode": rounding_mode})


def cost(inputs):
    tensors, divisor = inputs.args
    data = element_bytes(*tensors)
    return Cost(flops=sum(t.numel() for t in tensors), bytes=2 * data + element_bytes(divisor))


TASK = Task(
    id="Fusion/fused_hstack_div",
    difficulty=3,
    entry="fused_hstack_div",
    signature="fused_hstack_div(tensors, divisor, *, rounding_mode=None, out=None)",
    description=(
        "Join the list `tensors` horizontally as torch.hstack does (1-D tensors end to end; tensors with two or "
        "more dims along dim 1, all other dims equal), then divide the joined tensor X element-wise by "
        "`divisor`, a tensor that broadcasts to X's shape or a Python number. rounding_mode=None gives the true "
        "quotient; 'trunc' rounds it toward zero and 'floor' rounds it down, exactly as for the infinitely "
        "precise quotient (so a float32 quotient that rounds up to an integer must not be floored to that "
        "integer). Return a new tensor of X's shape in the inputs' dtype (all of one floating dtype); compute "
        "in at least float32; `out` stays None."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
