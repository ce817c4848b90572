"""Cross-entropy loss of class logits against integer targets."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(input, target, weight=None, ignore_index=-100, reduction="mean"):
    return torch.nn.functional.cross_entropy(input, target, weight=weight, ignore_index=ignore_index,
                                             reduction=reduction)


# (N, C, reduction, with weight, ignore_index) per (size, seed). The edge case with
# ignore_index=1 ignores a real class. The standard size has one configuration, so the seeds
# that rotate during timing share it.
CASES = {
    "small": [(64, 100, "mean", False, -100), (50, 37, "sum", True, -100)],
    "edge": [(3, 1001, "none", True, -100), (1001, 3, "mean", True, 1)],
    "standard": [(4096, 16384, "mean", True, -100)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    n, c, reduction, weighted, ignore_index = cases[seed % len(cases)]
    logits = randn((n, c), gen, dtype, mode, scale=2.0)
    target = torch.randint(0, c, (n,), generator=gen, dtype=torch.int64)
    if ignore_index < 0:
        # about 10% of the targets (at least one, never all) are ignored
        ignored = torch.rand((n,), generator=gen) < 0.1
        ignored[n // 2] = True
        ignored[0] = False
        target[ignored] = ignore_index
    kwargs = {"weight": uniform((c,), gen, dtype, 0.2, 2.0) if weighted else None,
              "ignore_index": ignore_index, "reduction": reduction}
    return Inputs((logits, target), kwargs)


def cost(inputs):
    logits, target = inputs.args
    weight = inputs.kwargs.get("weight")
    n, c = logits.shape
    out_bytes = n * logits.element_size() if inputs.kwargs.get("reduction") == "none" else logits.element_size()
    return Cost(flops=4 * n * c, bytes=element_bytes(logits, target, weight) + out_bytes)


TASK = Task(
    id="Loss/cross_entropy",
    difficulty=2,
    entry="cross_entropy",
    signature="cross_entropy(input, target, weight=None, ignore_index=-100, reduction='mean')",
    description=(
        "Cross-entropy between logits `input` of shape (N, C) and class indices `target` of shape (N,) "
        "(int64): sample i's loss is w[t_i] * (logsumexp(input[i, :]) - input[i, t_i]), where w is the "
        "optional per-class `weight` of shape (C,) (all ones when None), and samples whose target equals "
        "`ignore_index` contribute 0. reduction='none' returns the (N,) per-sample losses, 'sum' their total, "
        "and 'mean' their total divided by the sum of w[t_i] over the non-ignored samples; 'sum' and 'mean' "
        "return a 0-dim tensor. The result has the input's dtype; compute the log-sum-exp stably in float32 "
        "(logits may hold large outliers)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
