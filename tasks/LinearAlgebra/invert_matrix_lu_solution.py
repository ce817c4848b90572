import torch
import triton
import triton.language as tl


@triton.jit
def lu_invert_kernel(a_ptr, x_ptr, n, PIVOT: tl.constexpr, BLOCK: tl.constexpr):
    # One program per matrix, everything in registers: A and the identity R are reduced together.
    # Forward elimination (with PIVOT, the row with the largest |a[i, j]|, i >= j, the first such on
    # ties, is exchanged with row j in both tiles first) leaves U in A and L^-1 P^T in R; back
    # substitution with U then turns R into U^-1 L^-1 P^T = A^-1.
    pid = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n) & (cols[None, :] < n)
    offs = pid * n * n + rows[:, None] * n + cols[None, :]
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    r = tl.where(rows[:, None] == cols[None, :], 1.0, 0.0)
    for j in range(n):
        col = tl.sum(tl.where(cols[None, :] == j, a, 0.0), axis=1)
        if PIVOT:
            cand = tl.where((rows >= j) & (rows < n), tl.abs(col), -1.0)
            best = tl.max(cand, axis=0)
            p = tl.min(tl.where(cand == best, rows, BLOCK), axis=0)
        else:
            p = j
        a_j = tl.sum(tl.where(rows[:, None] == j, a, 0.0), axis=0)
        a_p = tl.sum(tl.where(rows[:, None] == p, a, 0.0), axis=0)
        r_j = tl.sum(tl.where(rows[:, None] == j, r, 0.0), axis=0)
        r_p = tl.sum(tl.where(rows[:, None] == p, r, 0.0), axis=0)
        pivot = tl.sum(tl.where(rows == p, col, 0.0), axis=0)
        col_j = tl.sum(tl.where(rows == j, col, 0.0), axis=0)
        col = tl.where(rows == p, col_j, col)
        mult = tl.where(rows > j, col / pivot, 0.0)
        a = tl.where(rows[:, None] == p, a_j[None, :], a)
        a = tl.where(rows[:, None] == j, a_p[None, :], a - mult[:, None] * a_p[None, :])
        r = tl.where(rows[:, None] == p, r_j[None, :], r)
        r = tl.where(rows[:, None] == j, r_p[None, :], r - mult[:, None] * r_p[None, :])
    for jj in range(n):
        j = n - 1 - jj
        col = tl.sum(tl.where(cols[None, :] == j, a, 0.0), axis=1)
        diag = tl.sum(tl.where(rows == j, col, 0.0), axis=0)
        x_j = tl.sum(tl.where(rows[:, None] == j, r, 0.0), axis=0) / diag
        r = tl.where(rows[:, None] == j, x_j[None, :], r - tl.where(rows[:, None] < j, col[:, None] * x_j[None, :], 0.0))
    tl.store(x_ptr + offs, r.to(x_ptr.dtype.element_ty), mask=mask)


def invert_matrix_lu(A, *, pivot=True, out=None):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"A must have shape (*, n, n), got {tuple(A.shape)}")
    a = A.contiguous()
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    result = torch.empty_like(a)
    if result.numel() > 0:
        block = max(16, triton.next_power_of_2(n))
        num_warps = 4 if block <= 32 else (8 if block <= 64 else 16)
        lu_invert_kernel[(batch,)](a, result, n, PIVOT=bool(pivot), BLOCK=block, num_warps=num_warps)
    if out is not None:
        out.copy_(result)
        return out
    return result
