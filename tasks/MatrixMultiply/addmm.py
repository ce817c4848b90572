"""Scaled matrix product plus a scaled, broadcast matrix: beta * input + alpha * (mat1 @ mat2)."""

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, mat1, mat2, beta=1, alpha=1, out=None):
    return torch.addmm(input, mat1, mat2, beta=beta, alpha=alpha, out=out)


# (M, K, N, shape of `input` as a function of (M, N), beta, alpha, mat2 transposed view) per
# (size, seed). `input` is a bias row, a full matrix, a column, or a 0-dim scalar; the edge case
# with beta=0 puts Inf into `input`, which must not reach the result. The standard size
# has one configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [(64, 80, 96, "row", 1.0, 1.0, False), (48, 64, 40, "full", -2.0, 0.5, False)],
    "edge": [(37, 1001, 3, "column", 0.0, 1.5, False), (1, 67, 33, "scalar", 0.25, -1.0, True)],
    "standard": [(4096, 4096, 4096, "row", 0.5, 0.75, False)],
}


def _input_shape(kind, m, n):
    return {"row": (n,), "full": (m, n), "column": (m, 1), "scalar": ()}[kind]


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    m, k, n, kind, beta, alpha, transposed = cases[seed % len(cases)]
    bias = randn(_input_shape(kind, m, n), gen, dtype, mode)
    if beta == 0.0:
        # with beta=0 the input is ignored entirely: Inf in it must not propagate (0 * Inf is NaN)
        bias = bias.clone()
        flat = bias.view(-1)
        flat[0] = float("inf")
        flat[-1] = float("-inf")
    mat1 = randn((m, k), gen, dtype, mode)
    if transposed:
        # mat2 arrives as a transposed (non-contiguous) view of an (N, K) tensor
        mat2 = randn((n, k), gen, dtype, mode, scale=k ** -0.5).t()
    else:
        mat2 = randn((k, n), gen, dtype, mode, scale=k ** -0.5)
    return Inputs((bias, mat1, mat2), {"beta": beta, "alpha": alpha})


def cost(inputs):
    bias, mat1, mat2 = inputs.args
    m, k = mat1.shape
    n = mat2.shape[1]
    read_bias = inputs.kwargs.get("beta", 1) != 0
    out_bytes = m * n * mat1.element_size()
    return Cost(flops=2 * m * k * n + 3 * m * n,
                bytes=element_bytes(mat1, mat2) + (element_bytes(bias) if read_bias else 0) + out_bytes)


TASK = Task(
    id="MatrixMultiply/addmm",
    difficulty=4,
    entry="addmm",
    signature="addmm(input, mat1, mat2, beta=1, alpha=1, out=None)",
    kernelbenchx_signature="addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None)",
    description=(
        "Return beta * input + alpha * (mat1 @ mat2) as torch.addmm does, where mat1 is (M, K), mat2 is (K, N) "
        "and `input` broadcasts to (M, N) (it may be (M, N), an (N,) row, an (M, 1) column or a 0-dim scalar); "
        "the result is a new (M, N) tensor in the inputs' dtype. alpha and beta are Python numbers; when beta is 0, "
        "`input` is not read at all, so NaN or Inf in it must not appear in the result. Operands may be "
        "non-contiguous views (e.g. a transposed mat2), so honour strides. Accumulate the product in float32 "
        "(TF32 tensor-core precision is accepted for float32); if `out` is given, write the result into it and "
        "return it."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
