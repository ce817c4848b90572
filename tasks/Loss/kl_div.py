"""Kullback-Leibler divergence loss between log-probabilities and a target distribution."""

import warnings

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, target, reduction="batchmean", log_target=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's note that 'mean' is not 'batchmean'
        return torch.nn.functional.kl_div(input, target, reduction=reduction, log_target=log_target)


# (shape, reduction, log_target, zero targets) per (size, seed): every reduction, targets given as
# probabilities (some exactly 0) or as log-probabilities. The standard size has one
# configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((64, 100), "batchmean", False, False), ((12, 7, 50), "sum", True, False)],
    "edge": [((1001, 3), "none", False, True), ((3, 1, 17), "mean", True, False)],
    "standard": [((8192, 8192), "batchmean", False, False)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, reduction, log_target, zeros = cases[seed % len(cases)]
    # input: log-probabilities over the last dim; target: another distribution over it
    x = randn(shape, gen, torch.float32, mode).log_softmax(-1).to(dtype)
    logits = randn(shape, gen, torch.float32, mode)
    if zeros:
        logits[torch.rand(shape, generator=gen) < 0.2] = float("-inf")
        logits[..., 0] = 0.0  # keep every row a distribution
    t = logits.log_softmax(-1) if log_target else logits.softmax(-1)
    return Inputs((x, t.to(dtype)), {"reduction": reduction, "log_target": log_target})


def cost(inputs):
    x, t = inputs.args
    out = x.numel() if inputs.kwargs.get("reduction") == "none" else 1
    return Cost(flops=4 * x.numel(), bytes=element_bytes(x, t) + out * x.element_size())


TASK = Task(
    id="Loss/kl_div",
    difficulty=3,
    entry="kl_div",
    signature="kl_div(input, target, reduction='batchmean', log_target=False)",
    description=(
        "Pointwise KL-divergence terms for `input` holding log-probabilities and `target` of the same shape and "
        "dtype: with log_target=False the target holds probabilities and the term is t * (log(t) - x), taken as "
        "0 where t == 0; with log_target=True the target holds log-probabilities and the term is "
        "exp(t) * (t - x). reduction='none' returns the terms (input's shape); 'sum' their total; 'mean' their "
        "average over all elements; 'batchmean' their total divided by input.shape[0]; the reduced forms are "
        "0-dim tensors. The result has the input's dtype; compute and accumulate in float32 for half inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
