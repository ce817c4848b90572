"""Mean squared error between two tensors, with 'none', 'sum' or 'mean' reduction."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, target, reduction="mean"):
    return torch.nn.functional.mse_loss(input, target, reduction=reduction)


# (shape, reduction) per (size, seed). The standard size has one configuration, so the seeds that
# rotate during timing share it.
CASES = {
    "small": [((64, 100), "mean"), ((12, 7, 50), "sum")],
    "edge": [((1001,), "none"), ((3, 1, 17), "mean")],
    "standard": [((8192, 8192), "mean")],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, reduction = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode)
    y = randn(shape, gen, dtype, mode, scale=0.5, shift=0.25)
    return Inputs((x, y), {"reduction": reduction})


def cost(inputs):
    x, y = inputs.args
    out = x.numel() if inputs.kwargs.get("reduction") == "none" else 1
    return Cost(flops=3 * x.numel(), bytes=element_bytes(x, y) + out * x.element_size())


TASK = Task(
    id="Loss/mse_loss",
    difficulty=1,
    entry="mse_loss",
    signature="mse_loss(input, target, reduction='mean')",
    description=(
        "Squared differences (input - target)**2 between two tensors of the same shape and dtype. "
        "reduction='none' returns them elementwise (same shape as the input), 'sum' returns their total and "
        "'mean' their average over all elements, both as a 0-dim tensor. The result has the input's dtype; "
        "square and accumulate in float32 for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
