"""Linear layer (x @ W^T + b), then Softplus with a linear branch above a threshold."""

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, weight, bias=None, beta=1, threshold=20):
    h = torch.nn.functional.linear(input, weight, bias)
    return torch.nn.functional.softplus(h, beta=beta, threshold=threshold)


# Per (size, seed): (leading dims, in_features, out_features, bias?, beta, threshold). Thresholds are
# large enough that the two branches agree closely at the switch (log(1 + exp(-threshold)) / beta), so
# rounding that moves a value across it costs nothing; beta * x reaches the threshold often enough to test
# the linear branch. The standard size has one configuration.
CASES = {
    "small": [((64,), 96, 80, True, 1, 20), ((2, 24), 64, 48, False, 4, 10)],
    "edge": [((37,), 33, 333, True, 3, 15), ((1, 3), 7, 3, False, 0.5, 20)],
    "standard": [((4096,), 4096, 4096, True, 1, 20)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    lead, k, n, with_bias, beta, threshold = cases[seed % len(cases)]
    x = randn(lead + (k,), gen, dtype, mode)
    w = randn((n, k), gen, dtype, mode, scale=1.5 / k ** 0.5)
    b = randn((n,), gen, dtype, mode, scale=0.5) if with_bias else None
    return Inputs((x, w, b), {"beta": beta, "threshold": threshold})


def cost(inputs):
    x, w, b = inputs.args
    n, k = w.shape
    rows = x.numel() // k
    return Cost(flops=2 * rows * k * n + 6 * rows * n, bytes=element_bytes(x, w, b) + rows * n * x.element_size())


TASK = Task(
    id="Fusion/fused_softplus_linear",
    difficulty=3,
    entry="fused_softplus_linear",
    signature="fused_softplus_linear(input, weight, bias=None, beta=1, threshold=20)",
    description=(
        "`input` has shape (*, in_features), `weight` (out_features, in_features) and `bias` is None or "
        "(out_features,). Compute h = input @ weight.T + bias, then return h where beta * h > threshold and "
        "log(1 + exp(beta * h)) / beta elsewhere, as a new tensor of shape (*, out_features) in the input's "
        "dtype; beta > 0 and threshold are Python numbers. Accumulate in float32 (TF32 is accepted for float32 "
        "inputs) and evaluate the softplus stably (no overflow for large beta * h, no loss for very negative)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
