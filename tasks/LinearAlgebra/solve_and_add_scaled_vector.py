"""Solve an upper-triangular system, then add a scaled vector to the solution."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(A, b, y, alpha):
    x = torch.linalg.solve_triangular(A, b, upper=True)
    return x + alpha * y


# Per size, the cases seeds rotate through: batch dims, n, k (right-hand sides). The standard size
# has one configuration, so the timing seeds share it.
CASES = {
    "small": [((4,), 24, 8), ((2, 2), 16, 5)],
    "edge": [((), 1, 1), ((3,), 13, 1)],
    "standard": [((8192,), 64, 64)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    batch, n, k = cases[seed % len(cases)]
    # The upper triangle is a diagonal of magnitude 1..2 with random signs plus small off-diagonal
    # entries (condition number about 3). The strictly lower triangle holds random values that the
    # solve must ignore.
    full = randn(batch + (n, n), gen, torch.float32, mode, scale=0.5 / n ** 0.5)
    diag = uniform(batch + (n,), gen, torch.float32, 1.0, 2.0)
    sign = torch.where(torch.rand(batch + (n,), generator=gen) < 0.5, -1.0, 1.0)
    a = full + torch.diag_embed(diag * sign - torch.diagonal(full, dim1=-2, dim2=-1))
    b = randn(batch + (n, k), gen, torch.float32, mode)
    # y has b's shape on even seeds and shape (n, 1) (one value per row) on odd ones.
    y_shape = batch + (n, k) if seed % 2 == 0 else (n, 1)
    y = randn(y_shape, gen, torch.float32, mode)
    alpha = (0.5, -1.25)[seed % 2]
    return Inputs((a.to(dtype), b.to(dtype), y.to(dtype), alpha))


def cost(inputs):
    a, b, y, _ = inputs.args
    n, k = b.shape[-2], b.shape[-1]
    batch = b.numel() // max(1, n * k)
    # Only the upper triangle of A need be read.
    tri = batch * n * (n + 1) // 2 * a.element_size()
    return Cost(flops=batch * (n * n * k + 2 * n * k), bytes=tri + 2 * element_bytes(b) + element_bytes(y))


TASK = Task(
    id="LinearAlgebra/solve_and_add_scaled_vector",
    difficulty=1,
    entry="solve_and_add_scaled_vector",
    signature="solve_and_add_scaled_vector(A: torch.Tensor, b: torch.Tensor, y: torch.Tensor, alpha: float)",
    description=(
        "For every matrix of a batch, solve the upper-triangular system A x = b by back substitution and return "
        "x + alpha * y. `A` has shape (*, n, n) with zero or more batch dimensions *; only its diagonal and "
        "upper triangle define the system, and the entries below the diagonal hold unrelated values that must "
        "be ignored. `b` has shape (*, n, k) (k right-hand-side columns), `y` is broadcastable to (*, n, k) (the "
        "inputs give it either b's shape or shape (n, 1), one value per row) and `alpha` is a Python float. "
        "Return a new (*, n, k) tensor in the inputs' dtype (float32); matrices are small (n up to about 128) "
        "and batches large."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
