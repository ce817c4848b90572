import math

import torch
import triton
import triton.language as tl


@triton.jit
def qr_solve_kernel(a_ptr, b_ptr, x_ptr, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # One program solves one least-squares problem held in registers. Householder reflections reduce A
    # to R and are applied to b on the fly (c = Q^T b, Q never formed); back substitution on the top n
    # rows then gives x = R^-1 c.
    pid = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    rhs = tl.arange(0, BK)
    a = tl.load(a_ptr + pid * m * n + rows[:, None] * n + cols[None, :],
                mask=(rows[:, None] < m) & (cols[None, :] < n), other=0.0).to(tl.float32)
    c = tl.load(b_ptr + pid * m * k + rows[:, None] * k + rhs[None, :],
                mask=(rows[:, None] < m) & (rhs[None, :] < k), other=0.0).to(tl.float32)
    for j in range(n):
        x = tl.sum(tl.where(cols[None, :] == j, a, 0.0), axis=1)
        x = tl.where(rows >= j, x, 0.0)
        xj = tl.sum(tl.where(rows == j, x, 0.0), axis=0)
        norm = tl.sqrt(tl.sum(x * x, axis=0))
        alpha = tl.where(xj >= 0, -norm, norm)
        v = tl.where(rows == j, x - alpha, x)
        vtv = tl.sum(v * v, axis=0)
        beta = tl.where(vtv > 0, 2.0 / tl.where(vtv > 0, vtv, 1.0), 0.0)
        w = tl.sum(v[:, None] * tl.where(cols[None, :] > j, a, 0.0), axis=0)
        a = a - (beta * v)[:, None] * w[None, :]
        a = tl.where((cols[None, :] == j) & (rows[:, None] >= j), tl.where(rows[:, None] == j, alpha, 0.0), a)
        wc = tl.sum(v[:, None] * c, axis=0)
        c = c - (beta * v)[:, None] * wc[None, :]
    sol = tl.zeros((BM, BK), dtype=tl.float32)
    for i in range(n):
        r = n - 1 - i
        ci = tl.sum(tl.where(rows[:, None] == r, c, 0.0), axis=0)
        rcol = tl.sum(tl.where(cols[None, :] == r, a, 0.0), axis=1)
        rrr = tl.sum(tl.where(rows == r, rcol, 0.0), axis=0)
        xi = ci / rrr
        sol = tl.where(rows[:, None] == r, xi[None, :], sol)
        c = c - tl.where(rows < r, rcol, 0.0)[:, None] * xi[None, :]
    tl.store(x_ptr + pid * n * k + rows[:, None] * k + rhs[None, :], sol.to(x_ptr.dtype.element_ty),
             mask=(rows[:, None] < n) & (rhs[None, :] < k))


def fused_qr_solve(A, b):
    if A.dim() < 2 or b.dim() != A.dim() or tuple(b.shape[:-1]) != tuple(A.shape[:-1]):
        raise ValueError(f"fused_qr_solve expects A (*, m, n) and b (*, m, k), got {tuple(A.shape)} and "
                         f"{tuple(b.shape)}")
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise ValueError(f"fused_qr_solve needs m >= n, got m={m}, n={n}")
    k = b.shape[-1]
    a = A.contiguous()
    rhs = b.contiguous()
    batch_shape = tuple(a.shape[:-2])
    batch = math.prod(batch_shape)
    x = torch.empty(batch_shape + (n, k), dtype=A.dtype, device=A.device)
    if batch == 0 or n == 0 or k == 0:
        return x
    bm = max(16, triton.next_power_of_2(m))
    bn = max(16, triton.next_power_of_2(n))
    bk = max(16, triton.next_power_of_2(k))
    largest = bm * (bn + bk)
    num_warps = 4 if largest <= 2048 else (8 if largest <= 8192 else 16)
    qr_solve_kernel[(batch,)](a, rhs, x, m, n, k, BM=bm, BN=bn, BK=bk, num_warps=num_warps)
    return x
