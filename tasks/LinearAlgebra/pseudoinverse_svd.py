"""Moore-Penrose pseudoinverse of every matrix of a batch, through its singular value decomposition."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, with_outliers


def reference(A, full_matrices=True, rcond=1e-15, out=None):
    U, S, Vh = torch.linalg.svd(A, full_matrices=full_matrices)
    k = S.shape[-1]
    cutoff = rcond * S.max(dim=-1, keepdim=True).values
    inverted = torch.where(S > cutoff, 1 / S, torch.zeros_like(S))
    return (Vh[..., :k, :].mH * inverted.unsqueeze(-2)) @ U[..., :, :k].mH


# Per size, the cases seeds and modes rotate through: batch dims, m, n, numerical rank r (the other
# singular values are about 1e-5, far below the cutoff), rcond (None: the default), full_matrices.
CASES = {
    "small": [((2,), 8, 6, 6, None, True), ((2,), 5, 8, 3, 1e-3, False), ((1, 2), 7, 7, 5, 1e-3, True),
              ((2,), 4, 6, 4, None, False)],
    "edge": [((), 1, 1, 1, None, True), ((2,), 7, 1, 1, None, False), ((), 2, 5, 1, 1e-3, True),
             ((), 9, 3, 2, 1e-3, False)],
    "standard": [((512,), 64, 48, 40, 1e-3, True)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    batch, m, n, r, rcond, full = cases[(seed % 2 + 2 * (mode == "outlier")) % len(cases)]
    k = min(m, n)
    # A = Q1 diag(s) Q2^T with random orthonormal Q1, Q2: r singular values spread over [1, 4.8] and
    # the rest near 1e-5, so every singular value is far from the cutoff rcond * max(s). Outlier mode
    # scales 0.1% of the matrices (at least one) by 50 as a whole, which keeps them as well conditioned
    # (single large elements or rows would make the float32 result of any method, torch's included,
    # differ from the float64 one by far more than the tolerance).
    q1 = torch.linalg.qr(torch.randn(batch + (m, m), generator=gen, dtype=torch.float64)).Q[..., :, :k]
    q2 = torch.linalg.qr(torch.randn(batch + (n, n), generator=gen, dtype=torch.float64)).Q[..., :, :k]
    kept = torch.linspace(4.0, 1.0, r, dtype=torch.float64) if r > 1 else torch.full((1,), 2.0, dtype=torch.float64)
    s = torch.cat([kept, torch.linspace(1e-5, 5e-6, k - r, dtype=torch.float64)])
    s = s * (1 + 0.2 * torch.rand(batch + (1,), generator=gen, dtype=torch.float64))
    a = (q1 * s.unsqueeze(-2)) @ q2.mT
    if mode == "outlier":
        a = a * with_outliers(torch.ones(batch + (1, 1), dtype=torch.float64), gen)
    kwargs = {"full_matrices": full}
    if rcond is not None:
        kwargs["rcond"] = rcond
    return Inputs((a.to(dtype),), kwargs)


def cost(inputs):
    (a,) = inputs.args
    m, n = a.shape[-2], a.shape[-1]
    big, small = max(m, n), min(m, n)
    batch = a.numel() // max(1, m * n)
    # an SVD with both sets of vectors (Golub and Van Loan's reduced count), then V diag(1/s) U^T
    flops = 4 * big * small * small + 8 * small ** 3 + 2 * m * n * small
    return Cost(flops=batch * flops, bytes=2 * element_bytes(a))


TASK = Task(
    id="LinearAlgebra/pseudoinverse_svd",
    difficulty=4,
    entry="pseudoinverse_svd",
    signature="pseudoinverse_svd(A, full_matrices=True, rcond=1e-15, out=None)",
    kernelbenchx_signature="pseudoinverse_svd(A, *, full_matrices=True, rcond=1e-15, out=None)",
    description=(
        "Return the Moore-Penrose pseudoinverse of every matrix in `A` of shape (*, m, n), a new (*, n, m) float32 "
        "tensor, computed from the SVD A = U diag(S) Vh: A^+ = Vh^T @ diag(S^+) @ U^T, where S^+ holds 1 / s for "
        "every singular value s strictly greater than rcond * max(S) of its matrix and 0 for the others (those "
        "directions are dropped). `full_matrices` selects torch's full or reduced SVD and does not change the "
        "result; `out` is always None. No singular value lies close to the cutoff. Matrices are small (m, n up "
        "to about 64) in large batches."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
