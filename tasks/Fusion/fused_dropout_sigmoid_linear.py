"""Linear layer, sigmoid, then dropout; judged statistically."""

from dataclasses import dataclass

import torch

from evaluator.contracts import Statistical
from evaluator.randomness import dropout_checks
from evaluator.task import Allowance, Cost, Inputs, Task, element_bytes, generator, pick, randn


@dataclass(frozen=True)
class StatisticalTF32(Statistical):
    """A Statistical contract whose float32 products may run as TF32: the roofline floor uses the TF32
    peak (as for Tolerance(tf32=True)), so a TF32 kernel is not rejected as impossibly fast."""

    tf32: bool = True


def reference(input, weight, bias=None, p=0.5, training=True, inplace=False):
    x = torch.sigmoid(torch.nn.functional.linear(input, weight, bias))
    return torch.nn.functional.dropout(x, p=p, training=training, inplace=False)


# Per (size, seed): (leading dims, in_features, out_features, bias?, p, training). The standard size
# has one configuration.
CASES = {
    "small": [((64,), 96, 80, True, 0.5, True), ((2, 24), 64, 48, False, 0.3, False)],
    "edge": [((37,), 33, 333, True, 0.2, True), ((1, 3), 7, 3, False, 0.5, True)],
    "standard": [((4096,), 4096, 4096, True, 0.2, True)],
}

# Kept elements must match (no-dropout value) / (1 - p) within eps * (|kept| + rms(kept)): about the
# output's rounding for half precision, and TF32 products for float32.
EPS = {torch.float32: 2e-3, torch.float16: 4e-3, torch.bfloat16: 1e-2}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    lead, k, n, with_bias, p, training = cases[seed % len(cases)]
    x = randn(lead + (k,), gen, dtype, mode)
    w = randn((n, k), gen, dtype, mode, scale=1.0 / k ** 0.5)
    b = randn((n,), gen, dtype, mode, scale=0.5) if with_bias else None
    return Inputs((x, w, b), {"p": p, "training": training, "inplace": False})


def check(inputs, runs):
    x, w, b = inputs.args
    p = inputs.kwargs.get("p", 0.5)
    training = inputs.kwargs.get("training", True)
    device = runs[0].device
    # the no-dropout value in float64, scaled as a kept element is
    h = torch.nn.functional.linear(x.to(device, torch.float64), w.to(device, torch.float64),
                                   None if b is None else b.to(device, torch.float64))
    kept = torch.sigmoid(h) / (1.0 - p) if training else torch.sigmoid(h)
    return dropout_checks(runs, kept, p if training else 0.0, EPS[x.dtype], what="sigmoid + dropout")


def cost(inputs):
    x, w, b = inputs.args
    n, k = w.shape
    rows = x.numel() // k
    return Cost(flops=2 * rows * k * n + 6 * rows * n, bytes=element_bytes(x, w, b) + rows * n * x.element_size())


TASK = Task(
    id="Fusion/fused_dropout_sigmoid_linear",
    difficulty=3,
    entry="fused_dropout_sigmoid_linear",
    signature=("fused_dropout_sigmoid_linear(input: torch.Tensor, weight: torch.Tensor, bias=None, p=0.5, "
               "training=True, inplace=False)"),
    description=(
        "`input` is (*, in_features), `weight` (out_features, in_features), `bias` None or (out_features,). "
        "Compute s = sigmoid(input @ weight.T + bias) and, with training=True, zero every element of s "
        "independently with probability p and multiply the kept ones by 1 / (1 - p); with training=False "
        "return s. The result is a new (*, out_features) tensor in the input's dtype (float32 accumulation, "
        "TF32 accepted). Draw a fresh seed per call with torch.randint(0, 2**31 - 1, (1,)).item() and generate "
        "the mask in the kernel (e.g. tl.rand(seed, offsets)); it is judged statistically (0 or the kept value "
        "everywhere, zero fraction consistent with p, a mask independent between elements, rows and calls). "
        "`inplace` changes nothing."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=StatisticalTF32(check=check),
    allowed=(Allowance(api="torch.randint", aten=("randint",),
                       why="draw a fresh seed on the host for the kernel's dropout mask"),),
)
