import math

import torch
import triton
import triton.language as tl


@triton.jit
def ldl_solve_kernel(a_ptr, b_ptr, x_ptr, n, k, BN: tl.constexpr, BK: tl.constexpr):
    # One program solves one system held in registers. Right-looking LDL^T without pivoting (the inputs
    # are diagonally dominant): step j takes d = a_jj and l = trailing column / d, subtracts l d l^T from
    # the trailing matrix and eliminates l from the right-hand sides (forward substitution, L y = b). The
    # tile keeps D on the diagonal, L below and L^T above it; then z = y / D and back substitution
    # L^T x = z reads L^T's columns.
    pid = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, BN)
    cols = tl.arange(0, BN)
    rhs = tl.arange(0, BK)
    a = tl.load(a_ptr + pid * n * n + rows[:, None] * n + cols[None, :],
                mask=(rows[:, None] < n) & (cols[None, :] < n), other=0.0).to(tl.float32)
    c = tl.load(b_ptr + pid * n * k + rows[:, None] * k + rhs[None, :],
                mask=(rows[:, None] < n) & (rhs[None, :] < k), other=0.0).to(tl.float32)
    for j in range(n):
        col = tl.sum(tl.where(cols[None, :] == j, a, 0.0), axis=1)
        d = tl.sum(tl.where(rows == j, col, 0.0), axis=0)
        l = tl.where(rows > j, col / d, 0.0)
        row = tl.sum(tl.where(rows[:, None] == j, a, 0.0), axis=0)
        a = a - l[:, None] * tl.where(cols > j, row, 0.0)[None, :]
        a = tl.where((cols[None, :] == j) & (rows[:, None] > j), l[:, None], a)
        a = tl.where((rows[:, None] == j) & (cols[None, :] > j), (row / d)[None, :], a)
        cj = tl.sum(tl.where(rows[:, None] == j, c, 0.0), axis=0)
        c = c - l[:, None] * cj[None, :]
    diag = tl.sum(tl.where(rows[:, None] == cols[None, :], a, 0.0), axis=1)
    c = c / tl.where(rows < n, diag, 1.0)[:, None]
    for i in range(n):
        r = n - 1 - i
        xr = tl.sum(tl.where(rows[:, None] == r, c, 0.0), axis=0)
        ucol = tl.sum(tl.where(cols[None, :] == r, a, 0.0), axis=1)
        c = c - tl.where(rows < r, ucol, 0.0)[:, None] * xr[None, :]
    tl.store(x_ptr + pid * n * k + rows[:, None] * k + rhs[None, :], c.to(x_ptr.dtype.element_ty),
             mask=(rows[:, None] < n) & (rhs[None, :] < k))


def solve_symmetric_ldl(A, b, hermitian=False, out=None):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"solve_symmetric_ldl expects A of shape (*, n, n), got {tuple(A.shape)}")
    n = A.shape[-1]
    vector = b.dim() == A.dim() - 1
    rhs = b.unsqueeze(-1) if vector else b
    if tuple(rhs.shape[:-1]) != tuple(A.shape[:-1]):
        raise ValueError(f"b must have shape (*, n) or (*, n, k) with A's batch dimensions, got {tuple(b.shape)}")
    k = rhs.shape[-1]
    a = A.contiguous()
    rhs = rhs.contiguous()
    batch_shape = tuple(a.shape[:-2])
    batch = math.prod(batch_shape)
    x = torch.empty(batch_shape + (n, k), dtype=A.dtype, device=A.device)
    if batch > 0 and n > 0 and k > 0:
        bn = max(16, triton.next_power_of_2(n))
        bk = max(16, triton.next_power_of_2(k))
        largest = bn * (bn + bk)
        num_warps = 4 if largest <= 2048 else (8 if largest <= 8192 else 16)
        ldl_solve_kernel[(batch,)](a, rhs, x, n, k, BN=bn, BK=bk, num_warps=num_warps)
    result = x.squeeze(-1) if vector else x
    if out is not None:
        out.copy_(result)
        return out
    return result
