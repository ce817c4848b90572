"""Linear layer (x @ W^T + b), then tanh."""

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, weight, bias=None):
    return torch.tanh(torch.nn.functional.linear(input, weight, bias))


# Per (size, seed): (leading dims, in_features, out_features, bias?). The standard size has one
# configuration.
CASES = {
    "small": [((64,), 96, 80, True), ((2, 24), 64, 48, False)],
    "edge": [((37,), 33, 333, True), ((1, 3), 7, 3, False)],
    "standard": [((4096,), 4096, 4096, True)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    lead, k, n, with_bias = cases[seed % len(cases)]
    x = randn(lead + (k,), gen, dtype, mode)
    w = randn((n, k), gen, dtype, mode, scale=1.0 / k ** 0.5)
    b = randn((n,), gen, dtype, mode, scale=0.5) if with_bias else None
    return Inputs((x, w, b))


def cost(inputs):
    x, w, b = inputs.args
    n, k = w.shape
    rows = x.numel() // k
    return Cost(flops=2 * rows * k * n + 4 * rows * n, bytes=element_bytes(x, w, b) + rows * n * x.element_size())


TASK = Task(
    id="Fusion/fused_tanh_linear",
    difficulty=3,
    entry="fused_tanh_linear",
    signature="fused_tanh_linear(input, weight, bias=None)",
    description=(
        "`input` has shape (*, in_features), `weight` (out_features, in_features) and `bias` is None or "
        "(out_features,). Return tanh(input @ weight.T + bias) as a new tensor of shape (*, out_features) in "
        "the input's dtype. Accumulate the products in float32 (TF32 is accepted for float32 inputs) and apply "
        "the bias and tanh to the accumulator before the single rounding to the output dtype."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
