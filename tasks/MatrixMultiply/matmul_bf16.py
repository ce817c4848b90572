"""bfloat16 matrix product with float32 accumulation."""

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, other):
    return torch.matmul(input, other)


# (shape of input, shape of other, other as a transposed view) per (size, seed): 2-D x 2-D,
# batched 3-D x 3-D, and a 3-D batch times one shared 2-D matrix. The standard size has one
# configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((64, 80), (80, 96), False), ((3, 48, 64), (3, 64, 40), False)],
    "edge": [((37, 1001), (1001, 3), True), ((5, 1, 67), (67, 33), False)],
    "standard": [((8192, 4096), (4096, 8192), False)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    a_shape, b_shape, transposed = cases[seed % len(cases)]
    k = a_shape[-1]
    a = randn(a_shape, gen, dtype, mode)
    if transposed:
        # `other` arrives as a transposed (non-contiguous) view
        b = randn(b_shape[:-2] + (b_shape[-1], b_shape[-2]), gen, dtype, mode, scale=k ** -0.5).transpose(-1, -2)
    else:
        b = randn(b_shape, gen, dtype, mode, scale=k ** -0.5)
    return Inputs((a, b))


def cost(inputs):
    a, b = inputs.args
    k, n = b.shape[-2], b.shape[-1]
    rows = a.numel() // a.shape[-1]  # batch * M
    return Cost(flops=2 * rows * k * n, bytes=element_bytes(a, b) + rows * n * a.element_size())


TASK = Task(
    id="MatrixMultiply/matmul_bf16",
    difficulty=2,
    entry="matmul_bf16",
    signature="matmul_bf16(input: Tensor, other: Tensor)",
    description=(
        "Multiply bfloat16 matrices as torch.matmul does and return a bfloat16 result: (M, K) @ (K, N) -> (M, N), "
        "batched (B, M, K) @ (B, K, N) -> (B, M, N), or a batch (B, M, K) times one shared (K, N) matrix -> "
        "(B, M, N). Operands may be non-contiguous views (e.g. a transpose), so honour strides. Accumulate the "
        "products in float32 and round to bfloat16 once, when storing the result."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.bfloat16,),
    contract=Tolerance(),
)
