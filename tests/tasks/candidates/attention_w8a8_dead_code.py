# task: Quantization/attention_w8a8
# expect: CONTRACT_FAIL
# reason: emulated
# Quantizes in code whose results are never used and computes in floating point.
import math

import torch
import triton
import triton.language as tl

QMAX = tl.constexpr(127.0)


@triton.jit
def _rtne(t):
    # round half to even
    f = tl.floor(t)
    d = t - f
    odd = (f - 2.0 * tl.floor(f * 0.5)) == 1.0
    return tl.where((d > 0.5) | ((d == 0.5) & odd), f + 1.0, f)


@triton.jit
def _quantize(v, scale):
    # symmetric int8 of v / scale, clamped to [-127, 127]
    r = _rtne(v / scale)
    return tl.minimum(tl.maximum(r, -QMAX), QMAX).to(tl.int8)


@triton.jit
def quantize_rows_kernel(x_ptr, q_ptr, s_ptr, R, D, BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    # per-row scales of the contiguous (R, D) matrix x; int8 q (R, D), scales (R,)
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < R
    cols = tl.arange(0, BLOCK_D)
    base = rows.to(tl.int64)[:, None] * D
    amax = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        mask = row_ok[:, None] & ((d0 + cols) < D)[None, :]
        v = tl.load(x_ptr + base + (d0 + cols)[None, :], mask=mask, other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.max(tl.abs(v), axis=1))
    scale = tl.where(amax > 0.0, amax / QMAX, 1.0)
    tl.store(s_ptr + rows, scale, mask=row_ok)
    for d0 in range(0, D, BLOCK_D):
        mask = row_ok[:, None] & ((d0 + cols) < D)[None, :]
        v = tl.load(x_ptr + base + (d0 + cols)[None, :], mask=mask, other=0.0).to(tl.float32)
        tl.store(q_ptr + base + (d0 + cols)[None, :], _quantize(v, scale[:, None]), mask=mask)


@triton.jit
def quantize_cols_kernel(v_ptr, q_ptr, s_ptr, L, C, BLOCK_L: tl.constexpr, BLOCK_C: tl.constexpr):
    # per-column scales of each contiguous (L, C) slice h of v (over the L keys); int8 q, scales (H, C)
    h = tl.program_id(1).to(tl.int64)
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_ok = cols < C
    ls = tl.arange(0, BLOCK_L)
    base = h * L * C
    amax = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for l0 in range(0, L, BLOCK_L):
        mask = ((l0 + ls) < L)[:, None] & col_ok[None, :]
        v = tl.load(v_ptr + base + (l0 + ls).to(tl.int64)[:, None] * C + cols[None, :], mask=mask,
                    other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.max(tl.abs(v), axis=0))
    scale = tl.where(amax > 0.0, amax / QMAX, 1.0)
    tl.store(s_ptr + h * C + cols, scale, mask=col_ok)
    for l0 in range(0, L, BLOCK_L):
        mask = ((l0 + ls) < L)[:, None] & col_ok[None, :]
        offs = base + (l0 + ls).to(tl.int64)[:, None] * C + cols[None, :]
        v = tl.load(v_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(q_ptr + offs, _quantize(v, scale[None, :]), mask=mask)


@triton.jit
def _scores_f(q_base, k_base, sq, sk_ptr, offs_m, m_ok, n0, Lk, D, inv_sqrt_d,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    offs_n = n0 + tl.arange(0, BLOCK_N)
    n_ok = offs_n < Lk
    offs_d = tl.arange(0, BLOCK_D)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        d_ok = (d0 + offs_d) < D
        a = tl.load(q_base + offs_m.to(tl.int64)[:, None] * D + (d0 + offs_d)[None, :],
                    mask=m_ok[:, None] & d_ok[None, :], other=0.0).to(tl.float32)
        b = tl.load(k_base + offs_n.to(tl.int64)[None, :] * D + (d0 + offs_d)[:, None],
                    mask=d_ok[:, None] & n_ok[None, :], other=0.0).to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    s = acc * inv_sqrt_d
    return tl.where(n_ok[None, :], s, float("-inf"))


@triton.jit
def _scores(q_base, k_base, sq, sk_ptr, offs_m, m_ok, n0, Lk, D, inv_sqrt_d,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    # dequantized scores of one (BLOCK_M, BLOCK_N) block: int8 Q K^T with int32 accumulation; keys past
    # Lk get -inf
    offs_n = n0 + tl.arange(0, BLOCK_N)
    n_ok = offs_n < Lk
    offs_d = tl.arange(0, BLOCK_D)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for d0 in range(0, D, BLOCK_D):
        d_ok = (d0 + offs_d) < D
        a = tl.load(q_base + offs_m.to(tl.int64)[:, None] * D + (d0 + offs_d)[None, :],
                    mask=m_ok[:, None] & d_ok[None, :], other=0)
        b = tl.load(k_base + offs_n.to(tl.int64)[None, :] * D + (d0 + offs_d)[:, None],
                    mask=d_ok[:, None] & n_ok[None, :], other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
    sk = tl.load(sk_ptr + offs_n, mask=n_ok, other=0.0)
    s = acc.to(tl.float32) * sq[:, None] * sk[None, :] * inv_sqrt_d
    return tl.where(n_ok[None, :], s, float("-inf"))


@triton.jit
def attention_int8_kernel(q_ptr, k_ptr, v_ptr, sq_ptr, sk_ptr, sv_ptr, o_ptr, qf_ptr, kf_ptr, vf_ptr,
                          QK_INT8: tl.constexpr, PV_INT8: tl.constexpr,
                          Lq, Lk, D, DV, inv_sqrt_d,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                          BLOCK_DV: tl.constexpr):
    # one (head h, BLOCK_M queries, BLOCK_DV value channels) tile. Pass 1: row max and row sum of the
    # float softmax numerators. Pass 2: recompute the scores, code P as round(127 * exp(s - max)) in
    # int8 and accumulate P V in int32; dequantize with sv / (127 * row sum).
    pid_m = tl.program_id(0)
    h = tl.program_id(1).to(tl.int64)
    pid_c = tl.program_id(2)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_ok = offs_m < Lq
    if QK_INT8:
        q_base = q_ptr + h * Lq * D
        k_base = k_ptr + h * Lk * D
    else:
        q_base = qf_ptr + h * Lq * D
        k_base = kf_ptr + h * Lk * D
    sk_base = sk_ptr + h * Lk
    sq = tl.load(sq_ptr + h * Lq + offs_m, mask=m_ok, other=1.0)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for n0 in range(0, Lk, BLOCK_N):
        if QK_INT8:
            s = _scores(q_base, k_base, sq, sk_base, offs_m, m_ok, n0, Lk, D, inv_sqrt_d,
                        BLOCK_M, BLOCK_N, BLOCK_D)
        else:
            s = _scores_f(q_base, k_base, sq, sk_base, offs_m, m_ok, n0, Lk, D, inv_sqrt_d,
                          BLOCK_M, BLOCK_N, BLOCK_D)
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(s - m_new[:, None]), axis=1)
        m_i = m_new

    offs_c = pid_c * BLOCK_DV + tl.arange(0, BLOCK_DV)
    c_ok = offs_c < DV
    v_base = v_ptr + h * Lk * DV
    acc = tl.zeros((BLOCK_M, BLOCK_DV), dtype=tl.int32)
    accf = tl.zeros((BLOCK_M, BLOCK_DV), dtype=tl.float32)
    for n0 in range(0, Lk, BLOCK_N):
        if QK_INT8:
            s = _scores(q_base, k_base, sq, sk_base, offs_m, m_ok, n0, Lk, D, inv_sqrt_d,
                        BLOCK_M, BLOCK_N, BLOCK_D)
        else:
            s = _scores_f(q_base, k_base, sq, sk_base, offs_m, m_ok, n0, Lk, D, inv_sqrt_d,
                          BLOCK_M, BLOCK_N, BLOCK_D)
        offs_n = n0 + tl.arange(0, BLOCK_N)
        if PV_INT8:
            p = _rtne(tl.exp(s - m_i[:, None]) * QMAX).to(tl.int8)
            vt = tl.load(v_base + offs_n.to(tl.int64)[:, None] * DV + offs_c[None, :],
                         mask=(offs_n < Lk)[:, None] & c_ok[None, :], other=0)
            acc = tl.dot(p, vt, acc, out_dtype=tl.int32)
        else:
            pf = tl.exp(s - m_i[:, None])
            vf = tl.load(vf_ptr + h * Lk * DV + offs_n.to(tl.int64)[:, None] * DV + offs_c[None, :],
                         mask=(offs_n < Lk)[:, None] & c_ok[None, :], other=0.0).to(tl.float32)
            accf += tl.dot(pf, vf, input_precision="ieee")
    sv = tl.load(sv_ptr + h * DV + offs_c, mask=c_ok, other=0.0)
    if PV_INT8:
        out = acc.to(tl.float32) * sv[None, :] / (QMAX * l_i[:, None])
    else:
        out = accf / l_i[:, None]
    o_ptrs = o_ptr + (h * Lq + offs_m.to(tl.int64))[:, None] * DV + offs_c[None, :]
    tl.store(o_ptrs, out.to(o_ptr.dtype.element_ty), mask=m_ok[:, None] & c_ok[None, :])


def _block(extent, smallest, largest):
    return max(smallest, min(largest, triton.next_power_of_2(extent)))


def attention_w8a8(query, key, value):
    lead = tuple(query.shape[:-2])
    if tuple(key.shape[:-2]) != lead or tuple(value.shape[:-2]) != lead or key.shape[-1] != query.shape[-1] \
            or value.shape[-2] != key.shape[-2]:
        raise ValueError("expected query (*, Lq, D), key (*, Lk, D), value (*, Lk, Dv)")
    lq, d = query.shape[-2], query.shape[-1]
    lk, dv = key.shape[-2], value.shape[-1]
    device = query.device
    out = torch.empty(lead + (lq, dv), device=device, dtype=query.dtype)
    heads = math.prod(lead)
    if heads == 0 or lq == 0 or dv == 0:
        return out
    q = query.contiguous()
    k = key.contiguous()
    v = value.contiguous()
    qq = torch.empty((heads, lq, d), device=device, dtype=torch.int8)
    kq = torch.empty((heads, lk, d), device=device, dtype=torch.int8)
    vq = torch.empty((heads, lk, dv), device=device, dtype=torch.int8)
    sq = torch.empty((heads, lq), device=device, dtype=torch.float32)
    sk = torch.empty((heads, lk), device=device, dtype=torch.float32)
    sv = torch.empty((heads, dv), device=device, dtype=torch.float32)

    block_d = _block(d, 16, 1024)
    for x, xq, s, rows in ((q, qq, sq, heads * lq), (k, kq, sk, heads * lk)):
        block_r = max(1, min(8192 // block_d, triton.next_power_of_2(rows)))
        quantize_rows_kernel[(triton.cdiv(rows, block_r),)](
            x, xq, s, rows, d, BLOCK_R=block_r, BLOCK_D=block_d, num_warps=8)
    block_c = _block(dv, 16, 64)
    quantize_cols_kernel[(triton.cdiv(dv, block_c), heads)](
        v, vq, sv, lk, dv, BLOCK_L=_block(lk, 16, 8192 // block_c), BLOCK_C=block_c, num_warps=8)

    block_m = _block(lq, 16, 64)
    block_n = _block(lk, 32, 64)
    block_dq = _block(d, 32, 128)
    block_dv = _block(dv, 16, 128)
    grid = (triton.cdiv(lq, block_m), heads, triton.cdiv(dv, block_dv))
    attention_int8_kernel[grid](
        qq, kq, vq, sq, sk, sv, out, q, k, v, False, False, lq, lk, d, dv, 1.0 / math.sqrt(d),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_D=block_dq, BLOCK_DV=block_dv, num_warps=4, num_stages=2)
    return out
