"""Dropout, then hard shrinkage of the scaled survivors; judged statistically."""

import torch

from evaluator.contracts import Statistical
from evaluator.randomness import dropout_checks
from evaluator.task import Allowance, Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, p=0.5, training=True, inplace=False, lambd=0.5):
    # `inplace` only concerns the intermediate here: the caller's tensor is never modified.
    dropped = torch.nn.functional.dropout(input, p=p, training=training, inplace=False)
    return torch.nn.functional.hardshrink(dropped, lambd=lambd)


# Per size, the cases seeds rotate through: (shape, p, training, lambd, inplace). The thresholds and
# the scales 1 / (1 - p) are exactly representable in every evaluated dtype, so rounding never moves a
# value across the threshold; the standard size has one configuration.
CASES = {
    "small": [((33, 257), 0.5, True, 0.5, False), ((16, 3, 170), 0.5, False, 1.0, True)],
    "edge": [((3, 1001), 0.75, True, 0.25, False), ((1, 7, 1, 613), 0.8, True, 0.75, True)],
    "standard": [((8192, 8192), 0.2, True, 0.5, False)],
}

EPS = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, p, training, lambd, inplace = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode)
    return Inputs((x,), {"p": p, "training": training, "inplace": inplace, "lambd": lambd})


def kept_value(x, p, training, lambd):
    """What every kept element must be, in float64: hardshrink(x / (1 - p)) (no scaling in eval mode)."""
    x64 = x.to(torch.float64)
    scaled = x64 / (1.0 - p) if training else x64
    return torch.nn.functional.hardshrink(scaled, lambd=lambd)


def check(inputs, runs):
    (x,) = inputs.args
    p = inputs.kwargs.get("p", 0.5)
    training = inputs.kwargs.get("training", True)
    lambd = inputs.kwargs.get("lambd", 0.5)
    device = runs[0].device if isinstance(runs[0], torch.Tensor) else x.device
    failures = []
    for number, run in enumerate(runs, start=1):
        if not isinstance(run, torch.Tensor):
            return [f"call {number} returned {type(run).__name__} where a tensor was expected"]
        if run.dtype != x.dtype:
            failures.append(f"call {number}: output dtype {run.dtype} where {x.dtype} was expected")
    if failures:
        return failures
    kept = kept_value(x.to(device), p, training, lambd)
    return dropout_checks(runs, kept, p if training else 0.0, EPS[x.dtype], what="dropout + hardshrink")


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=4 * x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Fusion/fused_hardshrink_dropout",
    difficulty=3,
    entry="fused_hardshrink_dropout",
    signature=("fused_hardshrink_dropout(input: torch.Tensor, p: float = 0.5, training: bool = True, "
               "inplace: bool = False, lambd: float = 0.5)"),
    description=(
        "Dropout followed by hard shrinkage, returned as a new tensor of the input's shape and dtype. With "
        "training=True every element is independently zeroed with probability p and otherwise multiplied by "
        "1 / (1 - p); with training=False it passes unchanged. Then hardshrink maps v to v when |v| > lambd and "
        "to 0 otherwise, so a kept element becomes hardshrink(x / (1 - p)). Draw a fresh seed on every call with "
        "torch.randint(0, 2**31 - 1, (1,)).item() and generate the mask in the kernel (e.g. tl.rand(seed, "
        "offsets)); the result is judged statistically (every element 0 or its kept value, the zero fraction "
        "consistent with p, a mask independent between elements, rows and calls). `inplace` changes nothing: "
        "`input` must not be modified."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Statistical(check=check),
    allowed=(Allowance(api="torch.randint", aten=("randint",),
                       why="draw a fresh seed on the host for the kernel's dropout mask"),),
)
