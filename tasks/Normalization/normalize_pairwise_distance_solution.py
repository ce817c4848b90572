import math

import torch
import triton
import triton.language as tl


@triton.jit
def _pow_abs(v, p, P_KIND: tl.constexpr):
    # |v| ** p for p > 0 (P_KIND 1: p == 1, 2: p == 2, 0: any p)
    if P_KIND == 1:
        r = tl.abs(v)
    elif P_KIND == 2:
        r = v * v
    else:
        r = tl.exp2(p * tl.log2(tl.abs(v)))
    return r


@triton.jit
def _root(s, p, P_KIND: tl.constexpr):
    # s ** (1 / p) for s >= 0
    if P_KIND == 1:
        r = s
    elif P_KIND == 2:
        r = tl.sqrt(s)
    else:
        r = tl.where(s > 0, tl.exp2(tl.log2(s) / p), 0.0)
    return r


@triton.jit
def row_distance_kernel(x1_ptr, x2_ptr, dist_ptr, rows, D, p, eps,
                        P_KIND: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    # dist[r] = (sum_k |x1[r, k] - x2[r, k] + eps| ** p) ** (1 / p) over contiguous rows of length D
    pid = tl.program_id(0)
    r = pid.to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    r_ok = r < rows
    ks = tl.arange(0, BLOCK_D)
    acc = tl.zeros((BLOCK_R, BLOCK_D), dtype=tl.float32)
    for k0 in range(0, D, BLOCK_D):
        k = k0 + ks
        mask = r_ok[:, None] & (k < D)[None, :]
        offs = r[:, None] * D + k[None, :]
        a = tl.load(x1_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(x2_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        term = _pow_abs(a - b + eps, p, P_KIND)
        acc += tl.where(mask, term, 0.0)
    tl.store(dist_ptr + r, _root(tl.sum(acc, axis=1), p, P_KIND), mask=r_ok)


@triton.jit
def normalize_kernel(d_ptr, out_ptr, L, I, p, eps,
                     P_KIND: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_I: tl.constexpr):
    # d is (O, L, I) contiguous; out[o, :, i] = d[o, :, i] / max(||d[o, :, i]||_p, eps)
    o = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_I + tl.arange(0, BLOCK_I)
    col_ok = cols < I
    ls = tl.arange(0, BLOCK_L)
    base = o * L * I
    acc = tl.zeros((BLOCK_L, BLOCK_I), dtype=tl.float32)
    for l0 in range(0, L, BLOCK_L):
        l = l0 + ls
        mask = (l < L)[:, None] & col_ok[None, :]
        v = tl.load(d_ptr + base + l[:, None] * I + cols[None, :], mask=mask, other=0.0)
        acc += tl.where(mask, _pow_abs(v, p, P_KIND), 0.0)
    norm = _root(tl.sum(acc, axis=0), p, P_KIND)
    inv = 1.0 / tl.maximum(norm, eps)
    for l0 in range(0, L, BLOCK_L):
        l = l0 + ls
        mask = (l < L)[:, None] & col_ok[None, :]
        offs = base + l[:, None] * I + cols[None, :]
        v = tl.load(d_ptr + offs, mask=mask, other=0.0)
        tl.store(out_ptr + offs, (v * inv[None, :]).to(out_ptr.dtype.element_ty), mask=mask)


def _p_kind(p):
    return 1 if p == 1 else 2 if p == 2 else 0


def normalize_pairwise_distance(x1, x2, p_distance=2.0, eps_distance=1e-6, keepdim=False, p_norm=2, dim_norm=1,
                                eps_norm=1e-12):
    if tuple(x1.shape) != tuple(x2.shape):
        raise ValueError("x1 and x2 must have the same shape")
    a = x1.contiguous()
    b = x2.contiguous()
    D = a.shape[-1]
    lead = list(a.shape[:-1])
    rows = math.prod(lead)
    dist = torch.empty((max(rows, 1),), device=a.device, dtype=torch.float32)
    block_d = max(16, min(512, triton.next_power_of_2(D)))
    block_r = max(1, min(64, 4096 // block_d))
    row_distance_kernel[(triton.cdiv(rows, block_r),)](
        a, b, dist, rows, D, float(p_distance), float(eps_distance),
        P_KIND=_p_kind(p_distance), BLOCK_R=block_r, BLOCK_D=block_d, num_warps=4)

    d_shape = lead + [1] if keepdim else lead
    nd = len(d_shape)
    dim = dim_norm % nd
    O = math.prod(d_shape[:dim])
    L = d_shape[dim]
    I = math.prod(d_shape[dim + 1:])
    out = torch.empty(d_shape, device=a.device, dtype=x1.dtype)
    block_i = max(16, min(64, triton.next_power_of_2(I)))
    block_l = max(16, min(1024, 4096 // block_i, triton.next_power_of_2(L)))
    normalize_kernel[(O, triton.cdiv(I, block_i))](
        dist, out, L, I, float(p_norm), float(eps_norm),
        P_KIND=_p_kind(p_norm), BLOCK_L=block_l, BLOCK_I=block_i, num_warps=4)
    return out
