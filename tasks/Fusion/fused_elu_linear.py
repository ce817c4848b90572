"""Linear layer (x @ W^T + b), then ELU."""

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, weight, bias=None, alpha=1.0, inplace=False):
    # `inplace` only concerns the intermediate: the result is a new tensor either way.
    return torch.nn.functional.elu(torch.nn.functional.linear(input, weight, bias), alpha=alpha)


# Per (size, seed): (leading dims, in_features, out_features, bias?, alpha). The standard size has
# one configuration.
CASES = {
    "small": [((64,), 96, 80, True, 1.0), ((2, 24), 64, 48, False, 0.5)],
    "edge": [((37,), 33, 333, True, 2.0), ((1, 3), 7, 3, False, 1.0)],
    "standard": [((4096,), 4096, 4096, True, 1.0)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    lead, k, n, with_bias, alpha = cases[seed % len(cases)]
    x = randn(lead + (k,), gen, dtype, mode)
    w = randn((n, k), gen, dtype, mode, scale=1.0 / k ** 0.5)
    b = randn((n,), gen, dtype, mode, scale=0.5) if with_bias else None
    return Inputs((x, w, b), {"alpha": alpha, "inplace": False})


def cost(inputs):
    x, w, b = inputs.args
    n, k = w.shape
    rows = x.numel() // k
    return Cost(flops=2 * rows * k * n + 3 * rows * n, bytes=element_bytes(x, w, b) + rows * n * x.element_size())


TASK = Task(
    id="Fusion/fused_elu_linear",
    difficulty=4,
    entry="fused_elu_linear",
    signature="fused_elu_linear(input, weight, bias=None, alpha=1.0, inplace=False)",
    description=(
        "`input` has shape (*, in_features), `weight` (out_features, in_features) and `bias` is None or "
        "(out_features,). Compute h = input @ weight.T + bias and return ELU(h) = h where h > 0 and "
        "alpha * (exp(h) - 1) elsewhere, as a new tensor of shape (*, out_features) in the input's dtype. "
        "Accumulate the products in float32 (TF32 is accepted for float32 inputs); `inplace` has no effect "
        "on the result and no input may be modified."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
