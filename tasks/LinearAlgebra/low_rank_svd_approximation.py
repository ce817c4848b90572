"""Best rank-k approximation of every matrix of a batch, through its singular value decomposition."""

import torch

from evaluator.contracts import DEFAULT_EPS, Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(A, k, *, full_matrices=True, out=None):
    U, S, Vh = torch.linalg.svd(A, full_matrices=full_matrices)
    return U[..., :, :k] @ torch.diag_embed(S[..., :k]) @ Vh[..., :k, :]


# Per size, the cases seeds and modes rotate through: batch dims, m, n, k, full_matrices.
CASES = {
    "small": [((2,), 8, 6, 2, True), ((2,), 5, 8, 2, False), ((1, 2), 7, 7, 3, True), ((2,), 4, 6, 1, False)],
    "edge": [((), 1, 1, 1, True), ((2,), 7, 1, 1, False), ((), 2, 5, 1, True), ((), 9, 3, 3, False)],
    "standard": [((512,), 64, 48, 16, True)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    batch, m, n, k, full = cases[(seed % 2 + 2 * (mode == "outlier")) % len(cases)]
    # A = X diag(s) Y^T / sqrt(m n) + noise: a rank-k part with singular values of order one, plus a
    # small full-rank noise, so the k-th and (k+1)-th singular values are far apart and A_k is well
    # defined. Outliers go into X: a few large rows of the rank-k part.
    x = randn(batch + (m, k), gen, torch.float32, mode).double()
    y = torch.randn(batch + (n, k), generator=gen, dtype=torch.float64)
    s = torch.linspace(4.0, 2.0, k, dtype=torch.float64) if k > 1 else torch.full((1,), 3.0, dtype=torch.float64)
    a = (x * s) @ y.mT / (m * n) ** 0.5
    if k < min(m, n):
        a = a + 0.01 * torch.randn(batch + (m, n), generator=gen, dtype=torch.float64) / max(m, n) ** 0.5
    return Inputs((a.to(dtype), k), {"full_matrices": full})


def cost(inputs):
    a, k = inputs.args
    m, n = a.shape[-2], a.shape[-1]
    big, small = max(m, n), min(m, n)
    batch = a.numel() // max(1, m * n)
    # an SVD with the small side's vectors and the long side's vectors (Golub and Van Loan), then the product
    flops = 4 * big * small * small + 8 * small ** 3 + 2 * m * n * k
    return Cost(flops=batch * flops, bytes=2 * element_bytes(a))


TASK = Task(
    id="LinearAlgebra/low_rank_svd_approximation",
    difficulty=3,
    entry="low_rank_svd_approximation",
    signature="low_rank_svd_approximation(A, k, *, full_matrices=True, out=None)",
    description=(
        "For every matrix in `A` of shape (*, m, n), return its best rank-k approximation A_k = U_k @ "
        "diag(S_k) @ Vh_k, built from the k largest singular values S_k and their left and right singular "
        "vectors (U_k: the first k columns of U, Vh_k: the first k rows of Vh of the SVD A = U diag(S) Vh); "
        "1 <= k <= min(m, n). The result has A's shape and dtype (float32) and is unique here because the "
        "k-th singular value is well above the (k+1)-th. `full_matrices` selects torch's full or reduced SVD "
        "and does not change the result; `out` is always None. Matrices are small (m, n up to about 64) in "
        "large batches."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
    # In outlier mode a few rows of A are 50 times larger; float32 rounding of A_k (torch's too) grows with
    # the norm of each row, so an element of such a row that is itself small can be off by a few 1e-5 of the
    # batch's rms. The float32 floor is raised from 1e-5 to 3e-5 for that; the bound still follows torch's
    # own error elsewhere.
    contract=Tolerance(eps=dict(DEFAULT_EPS, float32=3e-5)),
)
