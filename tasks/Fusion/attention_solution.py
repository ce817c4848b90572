import math

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, H, Sq, Sk, D, qk_scale,
                     sqb, sqh, sqm, sqd, skb, skh, skn, skd, svb, svh, svn, svd, sob, soh, som, sod,
                     CAUSAL: tl.constexpr, UPCAST: tl.constexpr, PRECISION: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    # One program per (query block, batch * head): stream key/value blocks with an online softmax
    # in base 2 (qk_scale includes log2(e)).
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // H).to(tl.int64)
    h = (bh % H).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    d_ok = offs_d < D
    q_ptrs = q_ptr + b * sqb + h * sqh + offs_m.to(tl.int64)[:, None] * sqm + offs_d[None, :] * sqd
    q = tl.load(q_ptrs, mask=(offs_m < Sq)[:, None] & d_ok[None, :], other=0.0)
    if UPCAST:
        q = q.to(tl.float32)
    k_base = k_ptr + b * skb + h * skh
    v_base = v_ptr + b * svb + h * svh

    m_i = tl.full((BLOCK_M,), -1.0e30, dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    hi = Sk
    if CAUSAL:
        hi = tl.minimum(Sk, (pid_m + 1) * BLOCK_M)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        col_ok = cols < Sk
        kv_mask = col_ok[:, None] & d_ok[None, :]
        k = tl.load(k_base + cols.to(tl.int64)[:, None] * skn + offs_d[None, :] * skd, mask=kv_mask, other=0.0)
        v = tl.load(v_base + cols.to(tl.int64)[:, None] * svn + offs_d[None, :] * svd, mask=kv_mask, other=0.0)
        if UPCAST:
            # the CPU interpreter multiplies bfloat16 tiles as raw 16-bit integers; widen them there
            k = k.to(tl.float32)
            v = v.to(tl.float32)
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * qk_scale
        valid = col_ok[None, :]
        if CAUSAL:
            valid = valid & (cols[None, :] <= offs_m[:, None])
        s = tl.where(valid, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m_i = m_new
    out = acc / l_i[:, None]
    o_ptrs = o_ptr + b * sob + h * soh + offs_m.to(tl.int64)[:, None] * som + offs_d[None, :] * sod
    tl.store(o_ptrs, out.to(o_ptr.dtype.element_ty), mask=(offs_m < Sq)[:, None] & d_ok[None, :])


def _block(extent, largest):
    return max(16, min(largest, triton.next_power_of_2(extent)))


def attention(q, k, v, causal: bool = False, softmax_scale=None, *, out=None):
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError("q, k, v must be (B, H, S, D)")
    B, H, Sq, D = q.shape
    Sk = k.shape[2]
    if tuple(k.shape) != (B, H, Sk, D) or tuple(v.shape) != (B, H, Sk, D):
        raise ValueError("k and v must be (B, H, Sk, D) with q's B, H and D")
    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(D)
    o = torch.empty((B, H, Sq, D), dtype=q.dtype, device=q.device)
    if o.numel() == 0:
        return o
    fp32 = q.dtype == torch.float32
    block_d = max(16, triton.next_power_of_2(D))
    block_m = _block(Sq, 64 if fp32 else 128)
    block_n = _block(Sk, 32 if fp32 else 64)
    upcast = q.dtype == torch.bfloat16 and q.device.type == "cpu"
    # float32: 3xTF32 products keep the scores and the weighted sum close to float32 accuracy
    precision = "tf32x3" if fp32 else "tf32"
    grid = (triton.cdiv(Sq, block_m), B * H)
    attention_kernel[grid](
        q, k, v, o, H, Sq, Sk, D, float(scale) * LOG2E,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        o.stride(0), o.stride(1), o.stride(2), o.stride(3),
        CAUSAL=bool(causal), UPCAST=upcast, PRECISION=precision,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_D=block_d,
        num_warps=8 if block_m >= 128 else 4, num_stages=2)
    if out is not None:
        out.copy_(o)
        return out
    return o
