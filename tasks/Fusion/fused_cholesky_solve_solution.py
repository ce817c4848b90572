import torch
import triton
import triton.language as tl


@triton.jit
def cholesky_solve_kernel(a_ptr, b_ptr, x_ptr, n, k, BLOCK: tl.constexpr, BLOCK_K: tl.constexpr):
    # One program per matrix, everything in registers.
    pid = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    rhs = tl.arange(0, BLOCK_K)
    inside = (rows[:, None] < n) & (cols[None, :] < n)
    a = tl.load(a_ptr + pid * n * n + rows[:, None] * n + cols[None, :], mask=inside, other=0.0).to(tl.float32)
    b_mask = (rows[:, None] < n) & (rhs[None, :] < k)
    b_offs = pid * n * k + rows[:, None] * k + rhs[None, :]
    y = tl.load(b_ptr + b_offs, mask=b_mask, other=0.0).to(tl.float32)

    # Right-looking Cholesky: at step j, column j of the trailing matrix scaled by 1/sqrt(a_jj) is
    # column j of L; its outer product is subtracted from the trailing matrix.
    for j in range(n):
        col = tl.sum(tl.where(cols[None, :] == j, a, 0.0), axis=1)
        diag = tl.sum(tl.where(rows == j, col, 0.0), axis=0)
        l = tl.where(rows >= j, col / tl.sqrt(diag), 0.0)
        a = tl.where(cols[None, :] == j, l[:, None], a - l[:, None] * l[None, :])
    lower = tl.where(cols[None, :] <= rows[:, None], a, 0.0)

    # Forward substitution L y = b: row j of y is final once divided by L[j, j]; it is then removed
    # from the rows below through column j of L.
    for j in range(n):
        col = tl.sum(tl.where(cols[None, :] == j, lower, 0.0), axis=1)
        diag = tl.sum(tl.where(rows == j, col, 0.0), axis=0)
        y_j = tl.sum(tl.where(rows[:, None] == j, y, 0.0), axis=0) / diag
        y = tl.where(rows[:, None] == j, y_j[None, :], y - tl.where(rows[:, None] > j, col[:, None] * y_j[None, :], 0.0))

    # Back substitution L^T x = y, from the last row up; column j of L^T is row j of L.
    upper = tl.trans(lower)
    for jj in range(n):
        j = n - 1 - jj
        col = tl.sum(tl.where(cols[None, :] == j, upper, 0.0), axis=1)
        diag = tl.sum(tl.where(rows == j, col, 0.0), axis=0)
        x_j = tl.sum(tl.where(rows[:, None] == j, y, 0.0), axis=0) / diag
        y = tl.where(rows[:, None] == j, x_j[None, :], y - tl.where(rows[:, None] < j, col[:, None] * x_j[None, :], 0.0))
    tl.store(x_ptr + b_offs, y.to(x_ptr.dtype.element_ty), mask=b_mask)


def fused_cholesky_solve(A, b):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"A must have shape (*, n, n), got {tuple(A.shape)}")
    if b.dim() != A.dim() or b.shape[-2] != A.shape[-1] or tuple(b.shape[:-2]) != tuple(A.shape[:-2]):
        raise ValueError("b must have shape (*, n, k) with A's batch dimensions")
    a = A.contiguous()
    rhs = b.contiguous()
    n, k = rhs.shape[-2], rhs.shape[-1]
    batch = a.numel() // max(1, n * n)
    x = torch.empty_like(rhs)
    if batch == 0 or n == 0 or k == 0:
        return x
    block = max(16, triton.next_power_of_2(n))
    block_k = max(16, triton.next_power_of_2(k))
    num_warps = 4 if block <= 32 else (8 if block <= 64 else 16)
    cholesky_solve_kernel[(batch,)](a, rhs, x, n, k, BLOCK=block, BLOCK_K=block_k, num_warps=num_warps)
    return x
