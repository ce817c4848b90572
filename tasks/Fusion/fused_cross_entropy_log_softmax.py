"""Log-softmax of class logits followed by cross-entropy against integer targets, with label smoothing."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(input, target, dim=1, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    log_probs = torch.nn.functional.log_softmax(input, dim=dim)
    return torch.nn.functional.cross_entropy(log_probs, target, weight=weight, ignore_index=ignore_index,
                                             reduction=reduction, label_smoothing=label_smoothing)


# (N, C, dim, reduction, with weight, ignore_index, label_smoothing) per (size, seed). The edge case
# with ignore_index=1 ignores a real class. The standard size has one configuration.
CASES = {
    "small": [(64, 100, 1, "mean", False, -100, 0.0), (50, 37, -1, "sum", True, -100, 0.1)],
    "edge": [(3, 1001, 1, "none", True, -100, 0.2), (1001, 3, -1, "mean", True, 1, 0.05)],
    "standard": [(4096, 16384, 1, "mean", True, -100, 0.1)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    n, c, dim, reduction, weighted, ignore_index, smoothing = cases[seed % len(cases)]
    logits = randn((n, c), gen, dtype, mode, scale=2.0)
    target = torch.randint(0, c, (n,), generator=gen, dtype=torch.int64)
    if ignore_index < 0:
        # about 10% of the targets (at least one, never all) are ignored
        ignored = torch.rand((n,), generator=gen) < 0.1
        ignored[n // 2] = True
        ignored[0] = False
        target[ignored] = ignore_index
    kwargs = {"dim": dim, "weight": uniform((c,), gen, dtype, 0.2, 2.0) if weighted else None,
              "ignore_index": ignore_index, "reduction": reduction, "label_smoothing": smoothing}
    return Inputs((logits, target), kwargs)


def cost(inputs):
    logits, target = inputs.args
    weight = inputs.kwargs.get("weight")
    n, c = logits.shape
    out_bytes = n * logits.element_size() if inputs.kwargs.get("reduction") == "none" else logits.element_size()
    return Cost(flops=6 * n * c, bytes=element_bytes(logits, target, weight) + out_bytes)


TASK = Task(
    id="Fusion/fused_cross_entropy_log_softmax",
    difficulty=4,
    entry="fused_cross_entropy_log_softmax",
    signature=("fused_cross_entropy_log_softmax(input: torch.Tensor, target: torch.Tensor, dim: int = 1, "
               "weight: torch.Tensor = None, ignore_index: int = -100, reduction: str = 'mean', "
               "label_smoothing: float = 0.0)"),
    description=(
        "Logits `input` of shape (N, C), class indices `target` of shape (N,) (int64); `dim` is the class "
        "dimension, 1 or -1. Take log-probabilities lp = log_softmax(input) over the classes and return their "
        "cross-entropy as torch.nn.functional.cross_entropy(lp, target, ...) does (applying log_softmax again "
        "changes nothing). With optional per-class `weight` w (all ones when None) and smoothing e = "
        "label_smoothing, row i contributes (1 - e) * w[t_i] * (-lp[i, t_i]) + (e / C) * sum_c w[c] * (-lp[i, c]), "
        "or 0 when t_i == ignore_index. reduction='none' returns the (N,) row losses, 'sum' their total, and "
        "'mean' their total divided by the sum of w[t_i] over non-ignored rows, as 0-dim tensors; the result "
        "has the input's dtype. Compute the log-sum-exp stably in float32 (logits may hold large outliers)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
