"""Linear layer (x W^T + b), then log-softmax along one dimension of the result."""

import math

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, weight, bias=None, dim=-1, dtype=None):
    logits = torch.nn.functional.linear(input, weight, bias)
    return torch.nn.functional.log_softmax(logits, dim=dim, dtype=dtype)


# Per size, the cases seeds rotate through: input shape (*, K), out_features N, bias?, dim, and whether
# dtype=torch.float32 is passed. The standard size has one configuration, so the timing seeds share it.
CASES = {
    "small": [((64, 80), 96, True, -1, False), ((3, 20, 48), 40, False, 1, True)],
    "edge": [((1, 37), 3, True, -1, False), ((5, 3, 33), 17, False, 0, True)],
    "standard": [((4096, 2048), 8192, True, -1, False)],      # ~137 GFLOP
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, n, has_bias, dim, cast = cases[seed % len(cases)]
    k = shape[-1]
    x = randn(shape, gen, dtype, mode)
    w = randn((n, k), gen, dtype, mode, scale=2.0 / math.sqrt(k))
    b = randn((n,), gen, dtype, "standard", scale=0.5) if has_bias else None
    return Inputs((x, w, b), {"dim": dim, "dtype": torch.float32 if cast else None})


def cost(inputs):
    x, w, b = inputs.args
    n, k = w.shape
    rows = x.numel() // k
    out_dtype = inputs.kwargs.get("dtype") or x.dtype
    return Cost(flops=2 * rows * n * k + 4 * rows * n,
                bytes=element_bytes(x, w, b) + rows * n * out_dtype.itemsize)


TASK = Task(
    id="Fusion/fused_log_softmax_linear",
    difficulty=3,
    entry="fused_log_softmax_linear",
    signature="fused_log_softmax_linear(input, weight, bias=None, dim=-1, dtype=None)",
    description=(
        "Compute the linear map z = input @ weight^T + bias for `input` (*, K), `weight` (N, K) and an optional "
        "`bias` (N,), giving z of shape (*, N); then return log_softmax along dimension `dim` of z (any dimension "
        "of z, negative values counting from the end): z - max - log(sum(exp(z - max))) over that dimension. The "
        "result has z's shape and the input's dtype, or `dtype` when it is given (e.g. torch.float32 for "
        "half-precision inputs: then the log-softmax is computed and returned in that type). Accumulate in "
        "float32; TF32 products are acceptable for float32 inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
