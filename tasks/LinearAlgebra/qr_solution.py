import math

import torch
import triton
import triton.language as tl


@triton.jit
def qr_kernel(a_ptr, q_ptr, r_ptr, m, n, kq, kr, steps,
              WRITE_Q: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BQ: tl.constexpr):
    # One program factors one matrix held in registers with Householder reflections. Step k turns
    # column k below the diagonal into zeros with H_k = I - beta v v^T; the reflectors are kept (column
    # k of `vs`) and Q = H_0 H_1 ... applied to the identity's first kq columns, last reflector first.
    pid = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    inside = (rows[:, None] < m) & (cols[None, :] < n)
    a = tl.load(a_ptr + pid * m * n + rows[:, None] * n + cols[None, :], mask=inside, other=0.0).to(tl.float32)
    vs = tl.zeros((BM, BN), dtype=tl.float32)
    betas = tl.zeros((BN,), dtype=tl.float32)
    for k in range(steps):
        x = tl.sum(tl.where(cols[None, :] == k, a, 0.0), axis=1)
        x = tl.where(rows >= k, x, 0.0)
        xk = tl.sum(tl.where(rows == k, x, 0.0), axis=0)
        norm = tl.sqrt(tl.sum(x * x, axis=0))
        alpha = tl.where(xk >= 0, -norm, norm)
        v = tl.where(rows == k, x - alpha, x)
        vtv = tl.sum(v * v, axis=0)
        beta = tl.where(vtv > 0, 2.0 / tl.where(vtv > 0, vtv, 1.0), 0.0)
        w = tl.sum(v[:, None] * a, axis=0)
        a = a - (beta * v)[:, None] * w[None, :]
        a = tl.where((cols[None, :] == k) & (rows[:, None] >= k), tl.where(rows[:, None] == k, alpha, 0.0), a)
        vs = tl.where(cols[None, :] == k, v[:, None], vs)
        betas = tl.where(cols == k, beta, betas)
    r = tl.where(cols[None, :] >= rows[:, None], a, 0.0)
    r_mask = (rows[:, None] < kr) & (cols[None, :] < n)
    tl.store(r_ptr + pid * kr * n + rows[:, None] * n + cols[None, :], r.to(r_ptr.dtype.element_ty), mask=r_mask)
    if WRITE_Q:
        qcols = tl.arange(0, BQ)
        q = tl.where(rows[:, None] == qcols[None, :], 1.0, 0.0)
        for i in range(steps):
            j = steps - 1 - i
            v = tl.sum(tl.where(cols[None, :] == j, vs, 0.0), axis=1)
            beta = tl.sum(tl.where(cols == j, betas, 0.0), axis=0)
            w = tl.sum(v[:, None] * q, axis=0)
            q = q - (beta * v)[:, None] * w[None, :]
        q_mask = (rows[:, None] < m) & (qcols[None, :] < kq)
        tl.store(q_ptr + pid * m * kq + rows[:, None] * kq + qcols[None, :], q.to(q_ptr.dtype.element_ty),
                 mask=q_mask)


def qr(A, mode='reduced', out=None):
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    if A.dim() < 2:
        raise ValueError(f"qr expects a (*, m, n) tensor, got shape {tuple(A.shape)}")
    a = A.contiguous()
    m, n = a.shape[-2], a.shape[-1]
    batch_shape = tuple(a.shape[:-2])
    batch = math.prod(batch_shape)
    k = min(m, n)
    kq = m if mode == "complete" else k
    kr = m if mode == "complete" else k
    r = torch.empty(batch_shape + (kr, n), dtype=A.dtype, device=A.device)
    if mode == "r":
        q = torch.empty(0, dtype=A.dtype, device=A.device)
    else:
        q = torch.empty(batch_shape + (m, kq), dtype=A.dtype, device=A.device)
    if batch == 0 or m == 0 or n == 0:
        return q, r
    bm = max(16, triton.next_power_of_2(m))
    bn = max(16, triton.next_power_of_2(n))
    bq = max(16, triton.next_power_of_2(kq))
    largest = bm * max(bn, bq)
    num_warps = 4 if largest <= 2048 else (8 if largest <= 8192 else 16)
    qr_kernel[(batch,)](a, r if mode == "r" else q, r, m, n, kq, kr, k,
                        WRITE_Q=mode != "r", BM=bm, BN=bn, BQ=bq, num_warps=num_warps)
    return q, r
