"""GELU, then the standard deviation over some dimensions (or all of them)."""

import math

import torch

from evaluator.task import Cost, Inputs, Task, generator, pick, randn


def reference(input, dim=None, keepdim=False, correction=1, approximate="none", out=None):
    g = torch.nn.functional.gelu(input, approximate=approximate)
    return torch.std(g, dim=dim, keepdim=keepdim, correction=correction, out=out)


# (shape, dim, keepdim, correction, approximate) per (size, seed): trailing dims as a tuple, a middle
# dim, every dim (a 0-dim result), non-adjacent dims with a size-1 dim between them. The standard
# size has one configuration.
CASES = {
    "small": [((8, 30, 50), (2, 1), False, 1, "none"), ((6, 40, 10), 1, True, 0, "tanh")],
    "edge": [((3, 1, 1001), None, False, 1, "tanh"), ((7, 3, 1, 5), (0, -1), True, 2, "none")],
    "standard": [((64, 1024, 1024), -1, False, 1, "none")],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dim, keepdim, correction, approximate = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode, scale=1.5, shift=0.3)
    return Inputs((x,), {"dim": dim, "keepdim": keepdim, "correction": correction, "approximate": approximate})


def cost(inputs):
    (x,) = inputs.args
    dim = inputs.kwargs.get("dim")
    dims = range(x.dim()) if dim is None else ((dim,) if isinstance(dim, int) else dim)
    reduced = {d % x.dim() for d in dims}
    out_numel = math.prod(s for d, s in enumerate(x.shape) if d not in reduced)
    # GELU (about 8 flops) plus mean and squared deviations per element
    return Cost(flops=12 * x.numel(), bytes=(x.numel() + out_numel) * x.element_size())


TASK = Task(
    id="Fusion/fused_gelu_std",
    difficulty=3,
    entry="fused_gelu_std",
    signature="fused_gelu_std(input, dim=None, keepdim=False, correction=1, approximate='none', out=None)",
    description=(
        "Apply GELU element-wise (approximate='none': x * 0.5 * (1 + erf(x / sqrt(2))); 'tanh': "
        "0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))), then return the standard deviation of the "
        "result over `dim`: an int, a tuple of ints (negative values count from the end, not necessarily "
        "adjacent) or None for all dims (a 0-dim result). With n values reduced per output, std = "
        "sqrt(sum((g - mean)**2) / (n - correction)), `correction` being a non-negative int. keepdim=True keeps "
        "the reduced dims with size 1. The result has the input's dtype; compute in float32 with a numerically "
        "stable variance (inputs may hold large outliers); `out` stays None."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
