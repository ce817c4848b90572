import math

import torch
import triton
import triton.language as tl


@triton.jit
def det_qr_kernel(a_ptr, out_ptr, n, BN: tl.constexpr):
    # One program reduces one matrix held in registers to R with Householder reflections. Reflection k
    # maps column k's lower part x to alpha e_k with alpha = -sign(x_k) |x|, and has determinant -1, so it
    # contributes -alpha = sign(x_k) |x| to det(A) = det(Q) prod(diag R).
    pid = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, BN)
    cols = tl.arange(0, BN)
    inside = (rows[:, None] < n) & (cols[None, :] < n)
    a = tl.load(a_ptr + pid * n * n + rows[:, None] * n + cols[None, :], mask=inside, other=0.0).to(tl.float32)
    det = tl.full((), 1.0, tl.float32)
    for k in range(n):
        x = tl.sum(tl.where(cols[None, :] == k, a, 0.0), axis=1)
        x = tl.where(rows >= k, x, 0.0)
        xk = tl.sum(tl.where(rows == k, x, 0.0), axis=0)
        norm = tl.sqrt(tl.sum(x * x, axis=0))
        alpha = tl.where(xk >= 0, -norm, norm)
        v = tl.where(rows == k, x - alpha, x)
        vtv = tl.sum(v * v, axis=0)
        beta = tl.where(vtv > 0, 2.0 / tl.where(vtv > 0, vtv, 1.0), 0.0)
        w = tl.sum(v[:, None] * tl.where(cols[None, :] > k, a, 0.0), axis=0)
        a = a - (beta * v)[:, None] * w[None, :]
        det = det * -alpha
    tl.store(out_ptr + pid, det.to(out_ptr.dtype.element_ty))


def determinant_via_qr(A, *, mode='reduced', out=None):
    if mode not in ("reduced", "complete"):
        raise ValueError(f"determinant_via_qr: mode must be 'reduced' or 'complete', got {mode!r}")
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"determinant_via_qr expects a (*, n, n) tensor, got shape {tuple(A.shape)}")
    a = A.contiguous()
    n = a.shape[-1]
    batch_shape = tuple(a.shape[:-2])
    batch = math.prod(batch_shape)
    result = torch.empty(batch_shape, dtype=A.dtype, device=A.device)
    if batch == 0:
        return result
    if n == 0:
        result.fill_(1.0)
        return result
    block = max(16, triton.next_power_of_2(n))
    num_warps = 4 if block <= 32 else (8 if block <= 64 else 16)
    det_qr_kernel[(batch,)](a, result, n, BN=block, num_warps=num_warps)
    return result
