"""Matrix product of two matrices, or of two equal-sized batches of matrices."""

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(tensor1, tensor2):
    return torch.matmul(tensor1, tensor2)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    if seed % 2 == 0:
        # 2-D x 2-D: (M, K) @ (K, N)
        m, k, n = pick(size, small=(64, 80, 96), standard=(4096, 4096, 4096), edge=(37, 1001, 3))
        a_shape, b_shape = (m, k), (k, n)
    else:
        # batched 3-D x 3-D: (B, M, K) @ (B, K, N)
        b, m, k, n = pick(size, small=(3, 48, 64, 40), standard=(8, 2048, 1024, 2048), edge=(5, 1, 67, 33))
        a_shape, b_shape = (b, m, k), (b, k, n)
    scale = 1.0 / k ** 0.5
    a = randn(a_shape, gen, dtype, mode)
    if size == "edge" and seed % 2 == 1:
        # `other` arrives as a transposed (non-contiguous) view of a (B, N, K) tensor
        other = randn((b_shape[0], b_shape[2], b_shape[1]), gen, dtype, mode, scale=scale).transpose(1, 2)
    else:
        other = randn(b_shape, gen, dtype, mode, scale=scale)
    return Inputs((a, other))


def cost(inputs):
    a, b = inputs.args
    k, n = b.shape[-2], b.shape[-1]
    rows = a.numel() // a.shape[-1]  # batch * M
    out_bytes = rows * n * a.element_size()
    return Cost(flops=2 * rows * k * n, bytes=element_bytes(a, b) + out_bytes)


TASK = Task(
    id="MatrixMultiply/matmul",
    difficulty=4,
    entry="matmul",
    signature="matmul(tensor1, tensor2)",
    kernelbenchx_signature="matmul(input, other, *, out=None)",
    description=(
        "Return the matrix product of `tensor1` and `tensor2`, as torch.matmul does, in the inputs' dtype. "
        "Both operands are either 2-D, (M, K) @ (K, N) -> (M, N), or 3-D batches of matrices with the same "
        "batch size, (B, M, K) @ (B, K, N) -> (B, M, N); either operand may be a non-contiguous view (e.g. a "
        "transpose), so honour strides or make it contiguous. Accumulate in float32 (TF32 tensor-core "
        "precision is accepted for float32 inputs). Return a new tensor."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
