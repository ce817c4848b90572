"""Broadcast `input` to a target shape, then choose per element between it and `other`."""

import math

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, target_sizes, cond, other):
    return torch.where(cond, input.expand(*target_sizes), other)


# (input shape, target_sizes, cond shape, other shape) per (size, seed): a row broadcast down a
# matrix, a new leading dim with an expanded middle dim, -1 entries, and cond/other that broadcast
# too. The standard size has one configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((1, 96), (64, 96), (64, 1), (64, 96)),
              ((8, 1, 40), (3, 8, 10, 40), (8, 10, 1), (3, 1, 10, 40))],
    "edge": [((1001, 1), (-1, 3), (1001, 3), (1, 3)),
             ((1, 1, 7), (5, -1, 7), (7,), (5, 1, 1))],
    "standard": [((1, 8192), (8192, 8192), (8192, 8192), (8192, 8192))],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    in_shape, target, cond_shape, other_shape = cases[seed % len(cases)]
    scale = 1000.0 if not dtype.is_floating_point else 1.0
    x = randn(in_shape, gen, dtype, mode, scale=scale)
    cond = torch.rand(cond_shape, generator=gen) < 0.5
    other = randn(other_shape, gen, dtype, mode, scale=scale, shift=5.0 * scale)
    return Inputs((x, target, cond, other))


def cost(inputs):
    x, target, cond, other = inputs.args
    full = [s if s != -1 else x.shape[i - (len(target) - x.dim())] for i, s in enumerate(target)]
    out_shape = torch.broadcast_shapes(tuple(full), cond.shape, other.shape)
    out_bytes = math.prod(out_shape) * other.element_size()
    return Cost(flops=0, bytes=element_bytes(x, cond, other) + out_bytes)


TASK = Task(
    id="Index/expand_where",
    difficulty=3,
    entry="expand_where",
    signature="expand_where(input, target_sizes, cond, other)",
    description=(
        "Broadcast `input` to the shape `target_sizes` (a tuple of ints, as Tensor.expand takes it: leading "
        "dims may be added, size-1 dims stretched, and -1 keeps a dim's size), then return a new tensor that "
        "holds, element by element, the broadcast input where the bool tensor `cond` is True and `other` "
        "where it is False. `cond` and `other` broadcast against the target shape as well, so the result has "
        "the broadcast shape of all three and the dtype of `input` (which `other` shares). No arithmetic is "
        "involved: every output element is a copy of one input element."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32, torch.float16, torch.bfloat16, torch.int32),
    contract=Exact(),
)
