import torch
import triton
import triton.language as tl


@triton.jit
def lu_solve_kernel(a_ptr, b_ptr, x_ptr, n, k, BLOCK: tl.constexpr, BLOCK_K: tl.constexpr):
    # One program per system, everything in registers. The matrix A and the right-hand sides B are
    # reduced together by Gaussian elimination with partial pivoting: at step j the row with the
    # largest |A[i, j]|, i >= j (the first such on ties), is exchanged with row j of both tiles and
    # eliminated from the rows below. Back substitution with the resulting upper triangle yields X.
    pid = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    rhs = tl.arange(0, BLOCK_K)
    m_mask = (rows[:, None] < n) & (cols[None, :] < n)
    a = tl.load(a_ptr + pid * n * n + rows[:, None] * n + cols[None, :], mask=m_mask, other=0.0)
    a = a.to(tl.float32)
    r_mask = (rows[:, None] < n) & (rhs[None, :] < k)
    r_offs = pid * n * k + rows[:, None] * k + rhs[None, :]
    r = tl.load(b_ptr + r_offs, mask=r_mask, other=0.0).to(tl.float32)
    for j in range(n):
        col = tl.sum(tl.where(cols[None, :] == j, a, 0.0), axis=1)
        cand = tl.where((rows >= j) & (rows < n), tl.abs(col), -1.0)
        best = tl.max(cand, axis=0)
        p = tl.min(tl.where(cand == best, rows, BLOCK), axis=0)
        a_j = tl.sum(tl.where(rows[:, None] == j, a, 0.0), axis=0)
        a_p = tl.sum(tl.where(rows[:, None] == p, a, 0.0), axis=0)
        r_j = tl.sum(tl.where(rows[:, None] == j, r, 0.0), axis=0)
        r_p = tl.sum(tl.where(rows[:, None] == p, r, 0.0), axis=0)
        pivot = tl.sum(tl.where(rows == p, col, 0.0), axis=0)
        col_j = tl.sum(tl.where(rows == j, col, 0.0), axis=0)
        # Column j after the exchange, and the multipliers of the rows below j.
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
    tl.store(x_ptr + r_offs, r.to(x_ptr.dtype.element_ty), mask=r_mask)


def solve(A, B):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"A must have shape (*, n, n), got {tuple(A.shape)}")
    n = A.shape[-1]
    batch_shape = tuple(A.shape[:-2])
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    a = A.contiguous()
    rhs = (B.unsqueeze(-1) if vector else B).contiguous()
    if rhs.dim() == 2 and len(batch_shape):
        rhs = rhs.expand(batch_shape + tuple(rhs.shape)).contiguous()
    if tuple(rhs.shape[:-2]) != batch_shape:
        raise ValueError("B must have A's batch dimensions")
    batch = a.numel() // max(1, n * n)
    k = rhs.shape[-1]
    x = torch.empty_like(rhs)
    if x.numel() > 0:
        block = max(16, triton.next_power_of_2(n))
        block_k = max(16, triton.next_power_of_2(k))
        num_warps = 4 if block <= 32 else (8 if block <= 64 else 16)
        lu_solve_kernel[(batch,)](a, rhs, x, n, k, BLOCK=block, BLOCK_K=block_k, num_warps=num_warps)
    return x.squeeze(-1) if vector else x
