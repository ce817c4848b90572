"""Negative log-likelihood loss: minus the log-probability of each sample's target class."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(input, target, weight=None, ignore_index=-100, reduction="mean"):
    return torch.nn.functional.nll_loss(input, target, weight=weight, ignore_index=ignore_index,
                                        reduction=reduction)


# (input shape, with weight, ignore_index, reduction) per (size, seed): (N, C) inputs and inputs
# with extra dims (N, C, d1, ...), ignore_index=1 ignoring a real class, every reduction. The
# standard size (many samples, few classes) has one configuration, so the seeds that rotate during
# timing share it.
CASES = {
    "small": [((64, 100), False, -100, "mean"), ((12, 10, 50), True, -100, "none")],
    "edge": [((1001, 3), True, 1, "sum"), ((5, 7, 1, 3), True, -100, "mean")],
    "standard": [((4194304, 16), True, -100, "mean")],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, weighted, ignore_index, reduction = cases[seed % len(cases)]
    n, c = shape[0], shape[1]
    x = randn(shape, gen, torch.float32, mode, scale=2.0).log_softmax(1).to(dtype)
    target_shape = (n,) + tuple(shape[2:])
    target = torch.randint(0, c, target_shape, generator=gen, dtype=torch.int64)
    if ignore_index < 0:
        # about 10% of the targets (never all of them) are ignored
        ignored = torch.rand(target_shape, generator=gen) < 0.1
        ignored.view(-1)[0] = False
        target[ignored] = ignore_index
    kwargs = {"weight": uniform((c,), gen, dtype, 0.2, 2.0) if weighted else None,
              "ignore_index": ignore_index, "reduction": reduction}
    return Inputs((x, target), kwargs)


def cost(inputs):
    x, target = inputs.args
    weight = inputs.kwargs.get("weight")
    # one input element per sample is needed (the target class's), plus the targets and weights
    out = target.numel() if inputs.kwargs.get("reduction") == "none" else 1
    return Cost(flops=2 * target.numel(),
                bytes=element_bytes(target, weight) + (target.numel() + out) * x.element_size())


TASK = Task(
    id="Loss/nll_loss",
    difficulty=2,
    entry="nll_loss",
    signature="nll_loss(input, target, weight=None, ignore_index=-100, reduction='mean')",
    description=(
        "`input` holds log-probabilities of shape (N, C) or (N, C, d1, ..., dk) (class dim 1) and `target` int64 "
        "class indices of shape (N,) or (N, d1, ..., dk). Each target position's loss is -w[c] * input[n, c, ...] "
        "with c its target class and w the per-class `weight` of shape (C,) (all ones when None); positions whose "
        "target equals `ignore_index` (which may be a real class) get 0. reduction='none' returns the losses "
        "(target's shape), 'sum' their total, and 'mean' their total divided by the sum of w[c] over the "
        "positions not ignored (0-dim results). The result has the input's dtype; accumulate in float32."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
