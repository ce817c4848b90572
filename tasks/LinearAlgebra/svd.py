"""Batched singular value decomposition, judged by the properties of a decomposition (the singular
vectors are not unique)."""

import torch

from evaluator.contracts import Property
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, with_outliers


def reference(A, full_matrices=True):
    return torch.linalg.svd(A, full_matrices=full_matrices)


# Per size, the cases seeds and modes rotate through: batch dims, m, n, full_matrices.
CASES = {
    "small": [((2,), 8, 6, True), ((2,), 5, 8, False), ((1, 2), 6, 6, True), ((2,), 4, 7, True)],
    "edge": [((), 1, 1, True), ((2,), 7, 1, True), ((), 1, 6, False), ((), 9, 3, True)],
    "standard": [((512,), 64, 48, True)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    batch, m, n, full = cases[(seed % 2 + 2 * (mode == "outlier")) % len(cases)]
    k = min(m, n)
    # A = Q1 diag(s) Q2^T with random orthonormal Q1, Q2 and singular values spread evenly over
    # [1, 4], so neighbouring singular values are well apart. Outlier mode scales a few rows by 50.
    q1 = torch.linalg.qr(torch.randn(batch + (m, m), generator=gen, dtype=torch.float64)).Q[..., :, :k]
    q2 = torch.linalg.qr(torch.randn(batch + (n, n), generator=gen, dtype=torch.float64)).Q[..., :, :k]
    s = torch.linspace(4.0, 1.0, k, dtype=torch.float64) if k > 1 else torch.full((1,), 2.0, dtype=torch.float64)
    s = s * (1 + 0.2 * torch.rand(batch + (1,), generator=gen, dtype=torch.float64))
    a = (q1 * s.unsqueeze(-2)) @ q2.mT
    if mode == "outlier":
        rows = with_outliers(torch.ones(batch + (m,), dtype=torch.float64), gen)
        a = a * rows.unsqueeze(-1)
    return Inputs((a.to(dtype),), {"full_matrices": full})


def cost(inputs):
    (a,) = inputs.args
    m, n = a.shape[-2], a.shape[-1]
    big, small = max(m, n), min(m, n)
    batch = a.numel() // max(1, m * n)
    full = inputs.kwargs.get("full_matrices", True)
    # Golub and Van Loan's operation counts for an SVD with both sets of singular vectors
    flops = (4 * big * big * small + 8 * big * small * small + 9 * small ** 3) if full else (
        4 * big * small * small + 8 * small ** 3)
    u = big * big if full else big * small
    v = small * small
    return Cost(flops=batch * flops, bytes=element_bytes(a) + batch * (u + v + small) * a.element_size())


def _measures(a64, U, S, Vh):
    """Per call: relative reconstruction error, orthonormality errors of U and Vh, error of S against
    float64 singular values relative to the largest one, and whether S is sorted (worst over the batch)."""
    k = S.shape[-1]
    U, S, Vh = U.double().cpu(), S.double().cpu(), Vh.double().cpu()
    recon = (U[..., :, :k] * S.unsqueeze(-2)) @ Vh[..., :k, :]
    norm = a64.flatten(-2).norm(dim=-1).clamp_min(1e-300)
    rec = float(((recon - a64).flatten(-2).norm(dim=-1) / norm).max()) if a64.numel() else 0.0
    eye_u = torch.eye(U.shape[-1], dtype=torch.float64)
    eye_v = torch.eye(Vh.shape[-2], dtype=torch.float64)
    orth_u = float((U.mT @ U - eye_u).abs().max()) if U.numel() else 0.0
    orth_v = float((Vh @ Vh.mT - eye_v).abs().max()) if Vh.numel() else 0.0
    exact = torch.linalg.svdvals(a64)
    sv = float(((S - exact).abs() / exact[..., :1].clamp_min(1e-300)).max()) if S.numel() else 0.0
    ordered = bool((S[..., :-1] >= S[..., 1:]).all()) if k > 1 else True
    return rec, orth_u, orth_v, sv, ordered


FACTOR = 10.0   # allowed multiple of torch's own float32 error on the same inputs
FLOOR = 1e-6    # plus this much (about ten float32 ulps), for inputs where torch is exact


def check(inputs, runs):
    (a,) = inputs.args
    full = inputs.kwargs.get("full_matrices", True)
    a64 = a.double().cpu()
    own = _measures(a64, *torch.linalg.svd(a.float().cpu(), full_matrices=full))
    names = ("reconstruction error ||A - U diag(S) Vh|| / ||A||", "orthonormality error of U (max |U^H U - I|)",
             "orthonormality error of Vh (max |Vh Vh^H - I|)",
             "singular value error (relative to the largest singular value)")
    failures = []
    for i, (U, S, Vh) in enumerate(runs):
        if not all(bool(torch.isfinite(t).all()) for t in (U, S, Vh)):
            failures.append(f"call {i + 1}: the outputs contain NaN or Inf")
            continue
        got = _measures(a64, U, S, Vh)
        for name, g, o in zip(names, got[:4], own[:4]):
            bound = FACTOR * o + FLOOR
            if not g <= bound:
                failures.append(f"call {i + 1}: {name} is {g:.3g}, allowed {bound:.3g} (torch's own float32 "
                                f"result has {o:.3g})")
        if not got[4]:
            failures.append(f"call {i + 1}: S is not sorted in descending order")
    return failures


TASK = Task(
    id="LinearAlgebra/svd",
    difficulty=4,
    entry="svd",
    signature="svd(A, full_matrices=True)",
    kernelbenchx_signature="linalg.svd(A, full_matrices=True, *, driver=None, out=None)",
    description=(
        "Compute the singular value decomposition A = U @ diag(S) @ Vh of every matrix in `A` of shape (*, m, "
        "n), with k = min(m, n): return the tuple (U, S, Vh) where S (*, k) holds the singular values in "
        "descending order and U, Vh have orthonormal columns and rows. With full_matrices=True, U is (*, m, m) "
        "and Vh is (*, n, n), the vectors beyond the k-th completing orthonormal bases; with "
        "full_matrices=False, U is (*, m, k) and Vh is (*, k, n). Singular vectors are not unique (each pair "
        "may flip sign, completions are any orthonormal basis), so any result with torch's accuracy in "
        "reconstruction, orthonormality and singular values is accepted; all outputs are float32, and matrices "
        "are small (m, n up to about 64) in large batches."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
    contract=Property(check=check),
)
