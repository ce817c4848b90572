import torch
import triton
import triton.language as tl


@triton.jit
def _pow_abs(v, p, P_KIND: tl.constexpr):
    # |v|^p for P_KIND 1 (p = 1), 2 (p = 2) or 0 (any p > 0)
    a = tl.abs(v)
    if P_KIND == 1:
        r = a
    elif P_KIND == 2:
        r = a * a
    else:
        r = tl.where(a > 0.0, tl.exp2(p * tl.log2(tl.maximum(a, 1e-38))), 0.0)
    return r


@triton.jit
def _root(s, p, P_KIND: tl.constexpr):
    # s^(1/p)
    if P_KIND == 1:
        r = s
    elif P_KIND == 2:
        r = tl.sqrt(s)
    else:
        r = tl.where(s > 0.0, tl.exp2(tl.log2(tl.maximum(s, 1e-38)) / p), 0.0)
    return r


@triton.jit
def normalize_distance_kernel(x1_ptr, x2_ptr, y_ptr, R, D, stride1, stride2, p, eps_norm, eps_dist,
                              P_KIND: tl.constexpr, SINGLE: tl.constexpr,
                              BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    # BLOCK_R rows per program: the two row norms, then the distance of the normalized rows.
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < R
    base1 = x1_ptr + rows.to(tl.int64)[:, None] * stride1
    base2 = x2_ptr + rows.to(tl.int64)[:, None] * stride2
    cols = tl.arange(0, BLOCK_D)[None, :]
    if SINGLE:
        ok = row_ok[:, None] & (cols < D)
        a = tl.load(base1 + cols, mask=ok, other=0.0).to(tl.float32)
        b = tl.load(base2 + cols, mask=ok, other=0.0).to(tl.float32)
        den1 = tl.maximum(_root(tl.sum(_pow_abs(a, p, P_KIND), axis=1), p, P_KIND), eps_norm)
        den2 = tl.maximum(_root(tl.sum(_pow_abs(b, p, P_KIND), axis=1), p, P_KIND), eps_norm)
        d = tl.where(ok, a / den1[:, None] - b / den2[:, None] + eps_dist, 0.0)
        total = tl.sum(_pow_abs(d, p, P_KIND), axis=1)
    else:
        acc1 = tl.zeros((BLOCK_R, BLOCK_D), dtype=tl.float32)
        acc2 = tl.zeros((BLOCK_R, BLOCK_D), dtype=tl.float32)
        for d0 in range(0, D, BLOCK_D):
            ok = row_ok[:, None] & (d0 + cols < D)
            a = tl.load(base1 + d0 + cols, mask=ok, other=0.0).to(tl.float32)
            b = tl.load(base2 + d0 + cols, mask=ok, other=0.0).to(tl.float32)
            acc1 += _pow_abs(a, p, P_KIND)
            acc2 += _pow_abs(b, p, P_KIND)
        den1 = tl.maximum(_root(tl.sum(acc1, axis=1), p, P_KIND), eps_norm)
        den2 = tl.maximum(_root(tl.sum(acc2, axis=1), p, P_KIND), eps_norm)
        acc = tl.zeros((BLOCK_R, BLOCK_D), dtype=tl.float32)
        for d0 in range(0, D, BLOCK_D):
            ok = row_ok[:, None] & (d0 + cols < D)
            a = tl.load(base1 + d0 + cols, mask=ok, other=0.0).to(tl.float32)
            b = tl.load(base2 + d0 + cols, mask=ok, other=0.0).to(tl.float32)
            diff = a / den1[:, None] - b / den2[:, None] + eps_dist
            acc += tl.where(ok, _pow_abs(diff, p, P_KIND), 0.0)
        total = tl.sum(acc, axis=1)
    tl.store(y_ptr + rows, _root(total, p, P_KIND).to(y_ptr.dtype.element_ty), mask=row_ok)


def fused_pairwise_distance_normalize(x1, x2, p_norm=2.0, eps_norm=1e-12, eps_distance=1e-6, keepdim=False):
    if x1.dim() != 2 or x2.dim() != 2 or x1.shape[1] != x2.shape[1]:
        raise ValueError("expected x1 and x2 of shape (N, D) (or (1, D))")
    if x1.shape[0] != x2.shape[0] and 1 not in (x1.shape[0], x2.shape[0]):
        raise ValueError("row counts do not broadcast")
    if not p_norm > 0:
        raise ValueError("p_norm must be positive")
    rows = max(x1.shape[0], x2.shape[0])
    d = x1.shape[1]
    a = x1 if x1.stride(1) == 1 else x1.contiguous()
    b = x2 if x2.stride(1) == 1 else x2.contiguous()
    stride1 = a.stride(0) if a.shape[0] > 1 else 0
    stride2 = b.stride(0) if b.shape[0] > 1 else 0
    y = torch.empty((rows, 1) if keepdim else (rows,), dtype=x1.dtype, device=x1.device)
    if rows == 0:
        return y
    p = float(p_norm)
    kind = 1 if p == 1.0 else (2 if p == 2.0 else 0)
    block_d = min(4096, max(16, triton.next_power_of_2(d)))
    block_r = max(1, min(4096 // block_d, triton.next_power_of_2(rows), 64))
    single = d <= block_d
    grid = (triton.cdiv(rows, block_r),)
    normalize_distance_kernel[grid](a, b, y, rows, d, stride1, stride2, p, float(eps_norm), float(eps_distance),
                                    P_KIND=kind, SINGLE=single, BLOCK_R=block_r, BLOCK_D=block_d,
                                    num_warps=8 if block_r * block_d >= 2048 else 4)
    return y
