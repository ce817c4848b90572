"""p-norm of alpha * A @ x + beta * x for a symmetric matrix A."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(A, x, alpha, beta, p=2.0):
    y = alpha * torch.mv(A, x) + beta * x
    return torch.norm(y, p)


# (n, alpha, beta, p) per (size, seed): the Euclidean norm, the 1-norm, p = 3 and the max-norm.
# The standard size has one configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [(96, 1.0, 1.0, 2.0), (130, -0.5, 2.0, 1.0)],
    "edge": [(1, 2.0, -1.0, 3.0), (255, 0.25, 0.0, float("inf"))],
    "standard": [(8192, 0.5, 1.5, 2.0)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    n, alpha, beta, p = cases[seed % len(cases)]
    g = randn((n, n), gen, torch.float32, mode, scale=(2 * n) ** -0.5)
    A = (g + g.T).to(dtype)  # exactly symmetric
    x = randn((n,), gen, dtype, mode)
    return Inputs((A, x, alpha, beta), {"p": p})


def cost(inputs):
    A, x, alpha, beta = inputs.args
    n = x.numel()
    return Cost(flops=2 * n * n + 6 * n, bytes=element_bytes(A, x) + A.element_size())


TASK = Task(
    id="Normalization/symmetric_matrix_vector_norm",
    difficulty=2,
    entry="symmetric_matrix_vector_norm",
    signature="symmetric_matrix_vector_norm(A: torch.Tensor, x: torch.Tensor, alpha: float, beta: float, p: float = 2.0)",
    description=(
        "With a symmetric matrix A of shape (n, n) and a vector x of shape (n,), form y = alpha * (A @ x) + "
        "beta * x and return its p-norm as torch.norm(y, p) does, as a 0-dim tensor in the inputs' dtype: "
        "(sum_i |y_i|**p) ** (1/p) for a positive finite p (p = 2 the Euclidean norm, p = 1 the sum of absolute "
        "values) and max_i |y_i| for p = inf. alpha, beta and p are Python floats and the inputs are not "
        "modified; accumulate in float32 (A's symmetry means A @ x equals A^T @ x, which a kernel may exploit)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
