"""Smooth L1 (Huber-like) loss between two tensors, with 'none', 'sum' or 'mean' reduction."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, target, beta=1.0, reduction="mean"):
    return torch.nn.functional.smooth_l1_loss(input, target, beta=beta, reduction=reduction)


# (shape, beta, reduction) per (size, seed): the default beta, smaller and larger ones, and
# beta=0 (plain L1). The standard size has one configuration, so the seeds that rotate during
# timing share it.
CASES = {
    "small": [((64, 100), 1.0, "mean"), ((12, 7, 50), 0.5, "sum")],
    "edge": [((1001,), 0.0, "none"), ((3, 1, 17), 2.0, "mean")],
    "standard": [((8192, 8192), 1.0, "mean")],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, beta, reduction = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode)
    y = randn(shape, gen, dtype, mode, scale=0.5, shift=0.25)
    return Inputs((x, y), {"beta": beta, "reduction": reduction})


def cost(inputs):
    x, y = inputs.args
    out = x.numel() if inputs.kwargs.get("reduction") == "none" else 1
    return Cost(flops=4 * x.numel(), bytes=element_bytes(x, y) + out * x.element_size())


TASK = Task(
    id="Loss/smooth_l1_loss",
    difficulty=2,
    entry="smooth_l1_loss",
    signature="smooth_l1_loss(input, target, beta=1.0, reduction='mean')",
    description=(
        "For two tensors of the same shape and dtype, with d = input - target elementwise, the loss is "
        "0.5 * d**2 / beta where |d| < beta and |d| - 0.5 * beta elsewhere; beta is a Python float >= 0, and "
        "beta == 0 gives |d|. reduction='none' returns the elementwise losses (input's shape), 'sum' their "
        "total and 'mean' their average, both as a 0-dim tensor. The result has the input's dtype; compute and "
        "accumulate in float32 for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
