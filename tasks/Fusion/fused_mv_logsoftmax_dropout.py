"""Matrix-vector product, log-softmax over the result, then dropout; judged statistically."""

import torch

from evaluator.contracts import Statistical
from evaluator.randomness import dropout_checks
from evaluator.task import Allowance, Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, vec, p=0.5, training=True, inplace=False, dim=0, *, out=None):
    s = torch.nn.functional.log_softmax(torch.mv(input, vec), dim=dim)
    y = torch.nn.functional.dropout(s, p=p, training=training, inplace=inplace)
    if out is not None:
        out.copy_(y)
        return out
    return y


# Per size, the cases seeds rotate through: (n, m), p, training, dim, and whether `input` arrives as a
# transposed (column-major) view. The standard size has one configuration.
CASES = {
    "small": [((192, 96), 0.5, True, 0, False), ((200, 130), 0.2, False, -1, False)],
    "edge": [((1, 7), 0.3, True, 0, False), ((37, 1001), 0.0, True, -1, True)],
    "standard": [((8192, 8192), 0.5, True, 0, False)],
}

# A kept element must match the float64 value / (1 - p) within EPS * (|value| + rms): float32
# accumulation of the dot products, and the output's rounding for half precision.
EPS = {torch.float32: 1e-4, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    (n, m), p, training, dim, transposed = cases[seed % len(cases)]
    a = randn((m, n), gen, dtype, mode).t() if transposed else randn((n, m), gen, dtype, mode)
    vec = randn((m,), gen, dtype, mode, scale=2.0 / m ** 0.5)
    return Inputs((a, vec), {"p": p, "training": training, "inplace": False, "dim": dim})


def check(inputs, runs):
    a, vec = inputs.args
    kw = inputs.kwargs
    p = kw.get("p", 0.5) if kw.get("training", True) else 0.0
    for i, run in enumerate(runs):
        if not isinstance(run, torch.Tensor) or run.dtype != a.dtype:
            return [f"call {i + 1}: expected a {str(a.dtype).removeprefix('torch.')} tensor"]
    device = runs[0].device
    s = torch.nn.functional.log_softmax(torch.mv(a.to(device, torch.float64), vec.to(device, torch.float64)), dim=0)
    return dropout_checks(runs, s / (1.0 - p), p, EPS[a.dtype], what="log_softmax + dropout")


def cost(inputs):
    a, vec = inputs.args
    n, m = a.shape
    return Cost(flops=2 * n * m + 6 * n, bytes=element_bytes(a, vec) + n * a.element_size())


TASK = Task(
    id="Fusion/fused_mv_logsoftmax_dropout",
    difficulty=2,
    entry="fused_mv_logsoftmax_dropout",
    signature="fused_mv_logsoftmax_dropout(input, vec, p=0.5, training=True, inplace=False, dim=0, *, out=None)",
    description=(
        "Compute z = input @ vec for a matrix `input` (n, m), possibly a non-contiguous view, and a vector `vec` "
        "(m,), then the log-softmax of the whole vector z (dim is 0 or -1, the same thing for a 1-D z): "
        "z - max(z) - log(sum(exp(z - max(z)))). With training=True apply dropout: zero each element "
        "independently with probability p (0 <= p < 1) and divide the kept ones by (1 - p); with training=False "
        "return the log-softmax unchanged. Return a new (n,) tensor in the input's dtype (float32 accumulation); "
        "`inplace` has no visible effect. Each call must draw a fresh mask: take a seed on the host with "
        "torch.randint(0, 2**31 - 1, (1,)).item() and draw in the kernel (e.g. tl.rand(seed, offsets)). Judged "
        "statistically: each element must be 0 or the value above, the share of zeros must fit p, and the mask "
        "must be independent between elements, rows and calls."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Statistical(check=check),
    allowed=(Allowance(api="torch.randint", aten=("randint",),
                       why="draw a fresh seed on the host for the dropout mask's random stream"),),
)
