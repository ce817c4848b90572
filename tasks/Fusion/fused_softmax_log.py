"""Natural logarithm, then softmax along one dimension (which normalizes each slice to sum to 1)."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, dim=-1, dtype=None):
    return torch.nn.functional.softmax(torch.log(input), dim=dim, dtype=dtype)


# Per (size, seed): (shape, dim, float32 result for half inputs?, share of exact zeros). The last dim
# and inner dims, slices longer than one block, positive and negative dims. The standard size has one
# configuration.
CASES = {
    "small": [((37, 300), -1, False, 0.0), ((16, 50, 24), 1, True, 0.0)],
    "edge": [((3, 9001), 1, False, 0.1), ((5, 2999, 3), -2, True, 0.1)],
    "standard": [((8192, 8192), -1, False, 0.0)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dim, wide, zeros = cases[seed % len(cases)]
    x = randn(shape, gen, torch.float32, mode, scale=2.0).abs() + 0.01
    if zeros:
        x = torch.where(torch.rand(shape, generator=gen) < zeros, torch.zeros_like(x), x)
    kwargs = {"dim": dim}
    if wide and dtype != torch.float32:
        kwargs["dtype"] = torch.float32
    return Inputs((x.to(dtype),), kwargs)


def cost(inputs):
    (x,) = inputs.args
    out_dtype = inputs.kwargs.get("dtype") or x.dtype
    out_size = torch.empty((), dtype=out_dtype).element_size()
    return Cost(flops=3 * x.numel(), bytes=element_bytes(x) + x.numel() * out_size)


TASK = Task(
    id="Fusion/fused_softmax_log",
    difficulty=4,
    entry="fused_softmax_log",
    signature="fused_softmax_log(input, dim=-1, dtype=None)",
    description=(
        "Take log(input) element-wise, then softmax along dimension `dim` (an int, possibly negative), and return "
        "the result with the input's shape. The entries are non-negative with at least one positive value per "
        "slice along `dim` (a zero gives log = -inf and probability 0). The result has the input's dtype, or "
        "`dtype` when it is given (then a half-precision input yields a float32 result); compute in float32. "
        "Slices may be longer than one block, and inputs may hold large outliers."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
