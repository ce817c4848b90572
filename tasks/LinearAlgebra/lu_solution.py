import torch
import triton
import triton.language as tl


@triton.jit
def lu_kernel(a_ptr, p_ptr, l_ptr, u_ptr, n, PIVOT: tl.constexpr, BLOCK: tl.constexpr):
    # One program per matrix, held in registers; LAPACK-style in-place elimination. With PIVOT, at
    # step j the row with the largest |a[i, j]|, i >= j (the first such on ties), is exchanged with
    # row j, whole rows (earlier multipliers included), and `perm` records which row of A sits at
    # each position. The multipliers of the rows below j are stored in column j and row j is
    # eliminated from the trailing columns. Finally L is the strict lower part plus a unit diagonal,
    # U the upper part, and P[r, c] = 1 where r = perm[c] (so that A = P L U).
    pid = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n) & (cols[None, :] < n)
    offs = pid * n * n + rows[:, None] * n + cols[None, :]
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    perm = rows
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
        perm_j = tl.sum(tl.where(rows == j, perm, 0), axis=0)
        perm_p = tl.sum(tl.where(rows == p, perm, 0), axis=0)
        perm = tl.where(rows == j, perm_p, tl.where(rows == p, perm_j, perm))
        pivot = tl.sum(tl.where(rows == p, col, 0.0), axis=0)
        col_j = tl.sum(tl.where(rows == j, col, 0.0), axis=0)
        col = tl.where(rows == p, col_j, col)
        mult = tl.where(rows > j, col / pivot, 0.0)
        a = tl.where(rows[:, None] == p, a_j[None, :], a)
        a = tl.where(rows[:, None] == j, a_p[None, :], a)
        below = rows[:, None] > j
        a = tl.where(below & (cols[None, :] == j), mult[:, None], a)
        a = tl.where(below & (cols[None, :] > j), a - mult[:, None] * a_p[None, :], a)
    lower = tl.where(cols[None, :] < rows[:, None], a, tl.where(cols[None, :] == rows[:, None], 1.0, 0.0))
    upper = tl.where(cols[None, :] >= rows[:, None], a, 0.0)
    tl.store(l_ptr + offs, lower.to(l_ptr.dtype.element_ty), mask=mask)
    tl.store(u_ptr + offs, upper.to(u_ptr.dtype.element_ty), mask=mask)
    if PIVOT:
        perm_matrix = tl.where(rows[:, None] == perm[None, :], 1.0, 0.0)
        tl.store(p_ptr + offs, perm_matrix.to(p_ptr.dtype.element_ty), mask=mask)


def lu(A, pivot=True, out=None):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"A must have shape (*, n, n), got {tuple(A.shape)}")
    a = A.contiguous()
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    P = torch.empty_like(a) if pivot else a.new_empty([0])
    L = torch.empty_like(a)
    U = torch.empty_like(a)
    if batch > 0 and n > 0:
        block = max(16, triton.next_power_of_2(n))
        num_warps = 4 if block <= 32 else (8 if block <= 64 else 16)
        # Without pivoting P is not written; L stands in for its pointer.
        lu_kernel[(batch,)](a, P if pivot else L, L, U, n, PIVOT=bool(pivot), BLOCK=block, num_warps=num_warps)
    if out is not None:
        for target, value in zip(out, (P, L, U)):
            target.copy_(value)
        return out
    return P, L, U
