import torch
import triton
import triton.language as tl


@triton.jit
def cholesky_solve_kernel(f_ptr, b_ptr, x_ptr, n, k, s_r, s_c, BLOCK: tl.constexpr, BLOCK_K: tl.constexpr):
    # One program solves one matrix for one block of right-hand-side columns. The lower factor F
    # (L itself, or U^T read through swapped strides) is read from memory a column or row at a
    # time; the matrix stays in cache. Forward substitution F z = B, then back substitution
    # F^T x = z, both on the register tile of right-hand sides.
    pid = tl.program_id(0).to(tl.int64)
    cb = tl.program_id(1)
    rows = tl.arange(0, BLOCK)
    rhs = cb * BLOCK_K + tl.arange(0, BLOCK_K)
    f_base = f_ptr + pid * n * n
    mask = (rows[:, None] < n) & (rhs[None, :] < k)
    offs = pid * n * k + rows[:, None] * k + rhs[None, :]
    x = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    for j in range(n):
        col = tl.load(f_base + rows * s_r + j * s_c, mask=(rows > j) & (rows < n), other=0.0).to(tl.float32)
        diag = tl.load(f_base + j * (s_r + s_c)).to(tl.float32)
        x_j = tl.sum(tl.where(rows[:, None] == j, x, 0.0), axis=0) / diag
        x = tl.where(rows[:, None] == j, x_j[None, :], x - col[:, None] * x_j[None, :])
    for jj in range(n):
        j = n - 1 - jj
        # Column j of F^T is row j of F.
        col = tl.load(f_base + j * s_r + rows * s_c, mask=rows < j, other=0.0).to(tl.float32)
        diag = tl.load(f_base + j * (s_r + s_c)).to(tl.float32)
        x_j = tl.sum(tl.where(rows[:, None] == j, x, 0.0), axis=0) / diag
        x = tl.where(rows[:, None] == j, x_j[None, :], x - col[:, None] * x_j[None, :])
    tl.store(x_ptr + offs, x.to(x_ptr.dtype.element_ty), mask=mask)


def cholesky_solve(B, L, upper=False, out=None):
    if L.dim() < 2 or L.shape[-1] != L.shape[-2]:
        raise ValueError(f"L must have shape (*, n, n), got {tuple(L.shape)}")
    if B.dim() != L.dim() or B.shape[-2] != L.shape[-1] or tuple(B.shape[:-2]) != tuple(L.shape[:-2]):
        raise ValueError("B must have shape (*, n, k) with L's batch dimensions")
    f = L.contiguous()
    rhs = B.contiguous()
    n, k = rhs.shape[-2], rhs.shape[-1]
    batch = rhs.numel() // max(1, n * k)
    x = torch.empty_like(rhs) if out is None else out
    if x.numel() == 0:
        return x
    target = x if x.is_contiguous() else torch.empty_like(rhs)
    # upper=True: the lower factor is U^T, whose (i, j) element is U[j, i].
    s_r, s_c = (1, n) if upper else (n, 1)
    block = max(16, triton.next_power_of_2(n))
    block_k = min(64, max(16, triton.next_power_of_2(k)))
    num_warps = 4 if block * block_k <= 2048 else 8
    grid = (batch, triton.cdiv(k, block_k))
    cholesky_solve_kernel[grid](f, rhs, target, n, k, s_r, s_c, BLOCK=block, BLOCK_K=block_k, num_warps=num_warps)
    if target is not x:
        x.copy_(target)
    return x
