"""Binary cross-entropy between predicted probabilities and targets, optionally weighted."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(input, target, weight=None, reduction="mean"):
    return torch.nn.functional.binary_cross_entropy(input, target, weight=weight, reduction=reduction)


# (shape, weight shape or None, hard 0/1 targets, reduction) per (size, seed): no weight, a weight
# per last-dim position, a full weight, a weight that broadcasts over trailing dims, soft and hard
# targets. The standard size has one configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((64, 100), None, False, "mean"), ((12, 7, 50), (50,), True, "sum")],
    "edge": [((1001,), (1001,), False, "none"), ((3, 1, 17), (3, 1, 1), True, "mean")],
    "standard": [((8192, 8192), None, False, "mean")],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, weight_shape, hard, reduction = cases[seed % len(cases)]
    # probabilities: the sigmoid of normal samples (outliers push them to 0 or 1, where the log is clamped)
    x = randn(shape, gen, torch.float32, mode, scale=2.0).sigmoid().to(dtype)
    if hard:
        y = (torch.rand(shape, generator=gen) < 0.5).to(dtype)
    else:
        y = uniform(shape, gen, dtype, 0.0, 1.0)
    weight = uniform(weight_shape, gen, dtype, 0.2, 2.0) if weight_shape else None
    return Inputs((x, y), {"weight": weight, "reduction": reduction})


def cost(inputs):
    x, y = inputs.args
    out = x.numel() if inputs.kwargs.get("reduction") == "none" else 1
    return Cost(flops=6 * x.numel(),
                bytes=element_bytes(x, y, inputs.kwargs.get("weight")) + out * x.element_size())


TASK = Task(
    id="Loss/binary_cross_entropy",
    difficulty=2,
    entry="binary_cross_entropy",
    signature="binary_cross_entropy(input, target, weight=None, reduction='mean')",
    description=(
        "For probabilities `input` in [0, 1] and targets `target` in [0, 1] of the same shape and dtype, the "
        "elementwise loss is -w * (y * max(log(x), -100) + (1 - y) * max(log(1 - x), -100)): each log is "
        "clamped at -100, so x = 0 or 1 gives finite values. w is `weight` broadcast to the input's shape "
        "(it may have fewer dims or size-1 dims), or 1 when None. reduction='none' returns the elementwise "
        "losses, 'sum' their total and 'mean' their average over all elements (a 0-dim tensor); the result has "
        "the input's dtype, computed in float32 for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
