"""y <- alpha * A @ x + beta * y in place, then the dot product of the updated y with x."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(A, x, y, alpha, beta):
    y.copy_(alpha * torch.mv(A, x) + beta * y)
    return torch.dot(y, x)


# (n, alpha, beta, A as a transposed view) per (size, seed); A is square so that y and x have the
# same length. The standard size has one configuration, so the seeds that rotate during timing
# share it.
CASES = {
    "small": [(96, 1.0, 1.0, False), (130, -0.5, 2.0, True)],
    "edge": [(1, 2.0, -1.0, False), (255, 0.25, 0.0, False)],
    "standard": [(8192, 0.5, 1.5, False)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    n, alpha, beta, transposed = cases[seed % len(cases)]
    A = randn((n, n), gen, dtype, mode, scale=n ** -0.5)
    if transposed:
        A = A.t()  # a non-contiguous (column-major) view
    x = randn((n,), gen, dtype, mode)
    y = randn((n,), gen, dtype, mode)
    return Inputs((A, x, y, alpha, beta))


def cost(inputs):
    A, x, y, alpha, beta = inputs.args
    n = A.shape[0]
    # reads A, x and y; writes y and the scalar
    return Cost(flops=2 * n * n + 5 * n, bytes=element_bytes(A, x) + 2 * element_bytes(y) + A.element_size())


TASK = Task(
    id="MatrixMultiply/matrix_vector_dot",
    difficulty=2,
    entry="matrix_vector_dot",
    signature="matrix_vector_dot(A: Tensor, x: Tensor, y: Tensor, alpha: float, beta: float)",
    description=(
        "With a square matrix A of shape (n, n) and vectors x and y of shape (n,), update y in place to "
        "alpha * (A @ x) + beta * y (the caller's tensor y holds the new values afterwards, stored in its dtype), "
        "then return the dot product of the updated y with x as a 0-dim tensor in the inputs' dtype. A may be a "
        "non-contiguous view (e.g. a transpose), so honour its strides; A and x are not modified. alpha and beta are "
        "Python floats; accumulate in float32 for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    mutates=(2,),
)
