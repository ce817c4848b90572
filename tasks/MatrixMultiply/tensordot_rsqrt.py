"""Reciprocal square root of a tensor contraction (torch.tensordot)."""

import math

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(a, b, dims):
    return torch.rsqrt(torch.tensordot(a, b, dims=dims))


# (shape of a, shape of b, dims) per (size, seed): an int, a pair of lists pairing a's dims with
# b's in another order, 0 (an outer product) and a list of lists. The standard size has one
# configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((6, 10, 48), (48, 80), 1), ((12, 8, 16), (16, 8, 40), ([1, 2], [1, 0]))],
    "edge": [((3, 5), (7,), 0), ((1001, 3), (3, 1, 17), [[1], [0]])],
    "standard": [((32, 128, 64, 64), (64, 64, 4096), 2)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    a_shape, b_shape, dims = cases[seed % len(cases)]
    # positive values (mean 1, spread 0.2), so every contraction is a positive sum
    a = randn(a_shape, gen, dtype, mode, scale=0.2, shift=1.0)
    b = randn(b_shape, gen, dtype, mode, scale=0.2, shift=1.0)
    return Inputs((a, b, dims))


def _contracted(a, b, dims):
    if isinstance(dims, int):
        return list(range(a.dim() - dims, a.dim())), list(range(dims))
    return list(dims[0]), list(dims[1])


def cost(inputs):
    a, b, dims = inputs.args
    da, _ = _contracted(a, b, dims)
    k = math.prod(a.shape[d] for d in da)
    m = a.numel() // k
    n = b.numel() // k
    return Cost(flops=2 * m * k * n + 2 * m * n, bytes=element_bytes(a, b) + m * n * a.element_size())


TASK = Task(
    id="MatrixMultiply/tensordot_rsqrt",
    difficulty=4,
    entry="tensordot_rsqrt",
    signature="tensordot_rsqrt(a: torch.Tensor, b: torch.Tensor, dims)",
    description=(
        "Contract `a` with `b` as torch.tensordot(a, b, dims) does and return 1 / sqrt of every element of the "
        "result, in the inputs' dtype. An int `dims` d sums over the last d dims of a paired in order with the first "
        "d dims of b (d = 0 gives the outer product); a pair of lists (or tuples) pairs a's dims[0][i] with b's "
        "dims[1][i], in any order. The result's shape is a's remaining dims followed by b's remaining dims, each in "
        "their original order. Accumulate in float32 (TF32 tensor-core precision is accepted for float32); the test "
        "inputs are positive, so every sum is positive."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
