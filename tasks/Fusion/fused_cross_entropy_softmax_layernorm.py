"""Cross-entropy loss of logits, plus layer normalization of their softmax probabilities."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(logits, targets, normalized_shape, weight=None, ignore_index=-100, reduction="mean",
              label_smoothing=0.0, eps=1e-5, *, out=None):
    loss = torch.nn.functional.cross_entropy(logits, targets, weight=weight, ignore_index=ignore_index,
                                             reduction=reduction, label_smoothing=label_smoothing)
    probabilities = torch.nn.functional.softmax(logits, dim=-1)
    # an int means a 1-element shape, as torch.nn.LayerNorm takes it
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    normalized = torch.nn.functional.layer_norm(probabilities, normalized_shape=shape, weight=None, bias=None,
                                                eps=eps)
    if out is not None:
        out.copy_(normalized)
        normalized = out
    return loss, normalized


# (N, C, normalized_shape as int/list/tuple, reduction, with weight, ignore_index, label_smoothing, eps)
# per (size, seed). The edge case with ignore_index=1 ignores a real class. The standard size has
# one configuration, so the timing seeds share it.
CASES = {
    "small": [(64, 100, "int", "mean", False, -100, 0.0, 1e-5), (50, 37, "list", "sum", True, -100, 0.1, 1e-3)],
    "edge": [(3, 1001, "int", "none", True, -100, 0.2, 1e-5), (1001, 3, "tuple", "mean", True, 1, 0.05, 1e-5)],
    "standard": [(4096, 16384, "int", "mean", True, -100, 0.1, 1e-5)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    n, c, shape_kind, reduction, weighted, ignore_index, smoothing, eps = cases[seed % len(cases)]
    logits = randn((n, c), gen, dtype, mode, scale=2.0)
    targets = torch.randint(0, c, (n,), generator=gen, dtype=torch.int64)
    if ignore_index < 0:
        # about 10% of the targets (at least one, never all) are ignored
        ignored = torch.rand((n,), generator=gen) < 0.1
        ignored[n // 2] = True
        ignored[0] = False
        targets[ignored] = ignore_index
    normalized_shape = {"int": c, "list": [c], "tuple": (c,)}[shape_kind]
    kwargs = {"weight": uniform((c,), gen, dtype, 0.2, 2.0) if weighted else None, "ignore_index": ignore_index,
              "reduction": reduction, "label_smoothing": smoothing, "eps": eps}
    return Inputs((logits, targets, normalized_shape), kwargs)


def cost(inputs):
    logits, targets, _ = inputs.args
    weight = inputs.kwargs.get("weight")
    n, c = logits.shape
    loss_bytes = n * logits.element_size() if inputs.kwargs.get("reduction") == "none" else logits.element_size()
    return Cost(flops=12 * n * c, bytes=2 * element_bytes(logits) + element_bytes(targets, weight) + loss_bytes)


TASK = Task(
    id="Fusion/fused_cross_entropy_softmax_layernorm",
    difficulty=3,
    entry="fused_cross_entropy_softmax_layernorm",
    signature=("fused_cross_entropy_softmax_layernorm(logits, targets, normalized_shape, weight=None, "
               "ignore_index=-100, reduction='mean', label_smoothing=0.0, eps=1e-5, *, out=None)"),
    description=(
        "`logits` is (N, C) and `targets` (N,) int64 class indices; return a tuple (loss, normalized). loss is "
        "torch.nn.functional.cross_entropy(logits, targets, weight, ignore_index, reduction, label_smoothing): "
        "with lse_i the log-sum-exp of row i, w the optional class weights (ones when None) and e the smoothing, "
        "row i contributes (1 - e) * w[t_i] * (lse_i - x[i, t_i]) + (e / C) * sum_c w[c] * (lse_i - x[i, c]), or 0 "
        "when t_i == ignore_index; 'none' gives the (N,) row losses, 'sum' their total, 'mean' their total divided "
        "by the sum of w[t_i] over non-ignored rows (0-dim). normalized is the row softmax p of the logits, "
        "layer-normalized over the C classes without affine parameters: (p - mean(p)) / sqrt(var(p) + eps), with "
        "the biased variance; `normalized_shape` is C (an int, or a 1-element list or tuple). Both results have "
        "the logits' dtype; compute in float32, stably (logits may hold large outliers)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
