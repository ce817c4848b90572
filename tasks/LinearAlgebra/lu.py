"""LU decomposition of a batch of square matrices: A = P L U, with or without partial pivoting."""

import torch

from evaluator.contracts import Property
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def unpivoted_lu(A):
    """A = L U by Gaussian elimination without row exchanges, in A's dtype (PyTorch computes this
    with pivot=False on CUDA only)."""
    n = A.shape[-1]
    u = A.clone()
    l = torch.zeros_like(A)
    for j in range(n):
        m = u[..., j + 1:, j] / u[..., j:j + 1, j]
        l[..., j + 1:, j] = m
        u[..., j + 1:, :] -= m.unsqueeze(-1) * u[..., j:j + 1, :]
    l.diagonal(dim1=-2, dim2=-1).fill_(1)
    return l, torch.triu(u)


def reference(A, pivot=True, out=None):
    if pivot:
        return torch.linalg.lu(A, out=out)
    if A.is_cuda:
        return torch.linalg.lu(A, pivot=False, out=out)
    L, U = unpivoted_lu(A)
    return A.new_empty([0]), L, U


SHAPES = {
    # (batch dims, n); seeds rotate through them. The standard size has one configuration.
    "small": [((2,), 16), ((1, 3), 10)],
    "edge": [((), 1), ((1, 2), 13)],
    "standard": [((8192,), 64)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **SHAPES)
    batch, n = cases[seed % len(cases)]
    pivot = seed % 2 == 0 if size == "standard" else (seed + (mode == "outlier")) % 2 == 0
    if pivot:
        # Plain Gaussian matrices: partial pivoting makes its usual, data-dependent row exchanges.
        a = randn(batch + (n, n), gen, torch.float32, mode)
    else:
        # Without pivoting, a dominant diagonal (random signs, magnitudes 1..2) plus small
        # off-diagonal noise keeps every pivot away from zero.
        noise = randn(batch + (n, n), gen, torch.float32, mode, scale=0.25 / n ** 0.5)
        diag = uniform(batch + (n,), gen, torch.float32, 1.0, 2.0)
        sign = torch.where(torch.rand(batch + (n,), generator=gen) < 0.5, -1.0, 1.0)
        a = noise - torch.diag_embed(torch.diagonal(noise, dim1=-2, dim2=-1)) + torch.diag_embed(diag * sign)
    return Inputs((a.to(dtype),), {"pivot": pivot})


# The product of the factors must reproduce A as well as PyTorch's own float32 factors do, up to
# this factor, plus a floor relative to the matrix's largest element (a faithful float32
# elimination stays within about a third of the bound; float16, bfloat16 or TF32 arithmetic fails).
RESIDUAL_FACTOR = 20.0
RESIDUAL_FLOOR = 1e-6
# With partial pivoting every multiplier has |L[i, j]| <= 1 (the pivot is the column's largest).
MULTIPLIER_SLACK = 1e-5


def permute_rows(p, m):
    """p @ m for permutation matrices p: row r of the product is row c of m where p[r, c] = 1."""
    index = p.argmax(dim=-1)
    return torch.gather(m, -2, index.unsqueeze(-1).expand(m.shape))


def check(inputs, runs):
    """A = P L U (L U without pivoting) within PyTorch's own float32 error; L unit lower triangular,
    U upper triangular, P a permutation matrix, and with pivoting no multiplier above 1 in size."""
    # Everything in float64 on the inputs' device (at the standard size the float64 products are
    # too slow for the CPU).
    A = inputs.args[0]
    pivot = inputs.kwargs.get("pivot", True)
    n = A.shape[-1]
    a64 = A.double().reshape(-1, n, n)

    def f64(t):
        return t.double().to(A.device).reshape(-1, n, n)

    # PyTorch's own float32 factorization and its residual per matrix.
    if pivot:
        P0, L0, U0 = torch.linalg.lu(A)
        own = permute_rows(f64(P0), f64(L0) @ f64(U0))
    else:
        L0, U0 = unpivoted_lu(A)
        own = f64(L0) @ f64(U0)
    scale = a64.abs().amax(dim=(-2, -1)).clamp_min(1e-30)
    own_err = (own - a64).abs().amax(dim=(-2, -1))
    # Relative to each matrix's scale; a matrix where PyTorch happens to be unusually exact is held
    # to the batch's median relative error instead.
    own_rel = own_err / scale
    bound = scale * (RESIDUAL_FACTOR * torch.maximum(own_rel, own_rel.median()) + RESIDUAL_FLOOR)
    lower = torch.tril(torch.ones(n, n, dtype=torch.bool, device=A.device), -1)
    eye = torch.eye(n, dtype=torch.bool, device=A.device)
    failures = []
    for r, (P, L, U) in enumerate(runs):
        run = f"call {r + 1}: " if len(runs) > 1 else ""
        l64 = f64(L)
        u64 = f64(U)
        if not (bool(torch.isfinite(l64).all()) and bool(torch.isfinite(u64).all())):
            failures.append(run + "L or U contains NaN or Inf")
            continue
        if bool((l64[:, ~(lower | eye)] != 0).any()):
            failures.append(run + "L has nonzero elements above its diagonal (it must be lower triangular)")
        if bool((l64[:, eye] != 1).any()):
            failures.append(run + "L's diagonal is not all exactly 1 (L must be unit lower triangular)")
        if bool((u64[:, lower] != 0).any()):
            failures.append(run + "U has nonzero elements below its diagonal (it must be upper triangular)")
        if pivot:
            p64 = f64(P)
            binary = bool(((p64 == 0) | (p64 == 1)).all())
            if not binary or bool((p64.sum(-1) != 1).any()) or bool((p64.sum(-2) != 1).any()):
                failures.append(run + "P is not a permutation matrix (entries 0 or 1, one 1 in every row and column)")
                continue
            big = float(l64.abs().max()) if l64.numel() else 0.0
            if big > 1 + MULTIPLIER_SLACK:
                failures.append(run + f"L has a multiplier of size {big:.4g} > 1: the pivot of each column must be "
                                      "its largest remaining element in size (partial pivoting)")
            product = permute_rows(p64, l64 @ u64)
        else:
            product = l64 @ u64
        err = (product - a64).abs().amax(dim=(-2, -1))
        worst = int(torch.argmax(err / bound))
        if bool((err > bound).any()):
            what = "P @ L @ U" if pivot else "L @ U"
            failures.append(run + f"{what} differs from A by up to {float(err[worst]):.3g} in matrix {worst} (PyTorch's "
                                  f"own float32 factors: {float(own_err[worst]):.3g}; allowed {float(bound[worst]):.3g}); "
                                  f"{int((err > bound).sum())} of {err.numel()} matrices fail")
    return failures


def cost(inputs):
    (a,) = inputs.args
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    outputs = 3 if inputs.kwargs.get("pivot", True) else 2
    return Cost(flops=batch * 2 * n ** 3 / 3, bytes=(1 + outputs) * element_bytes(a))


TASK = Task(
    id="LinearAlgebra/lu",
    difficulty=4,
    entry="lu",
    signature="lu(A, pivot=True, out=None)",
    kernelbenchx_signature="lu(A, *, pivot=True, out=None)",
    description=(
        "Factor every matrix in `A` of shape (*, n, n) (zero or more batch dimensions *) and return the tuple "
        "(P, L, U) of new float32 tensors of A's shape: with pivot=True, A = P L U by Gaussian elimination with "
        "partial pivoting (at each step the pivot is the remaining element of largest magnitude in the column), "
        "P a permutation matrix, L unit lower triangular (ones on the diagonal, exact zeros above it) and U upper "
        "triangular (exact zeros below). With pivot=False, A = L U without row exchanges (those inputs have a "
        "dominant diagonal) and P is an empty tensor of shape (0,). `out` is always None. Any factors with these "
        "properties whose product reproduces A about as accurately as float32 elimination does are accepted (row "
        "choices on exact ties are free). Matrices are small (n up to about 128) and batches large."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
    contract=Property(check=check),
)
