# task: Fusion/attention
# style: block pointers (tl.make_block_ptr / tl.advance), tl.program_id(axis=1) over batch*heads, tl.dot(input_precision="ieee") for fp32, online softmax with exp2, __main__ self-test
import math

import torch
import triton
import triton.language as tl


@triton.jit
def flash_fwd_kernel(
    Q, K, V, O,
    sq_b, sq_h, sq_s, sq_d,
    sk_b, sk_h, sk_s, sk_d,
    sv_b, sv_h, sv_s, sv_d,
    so_b, so_h, so_s, so_d,
    H, SEQ_Q, SEQ_K, HEAD_DIM, qk_scale,
    CAUSAL: tl.constexpr, DOT_F32: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    start_m = tl.program_id(axis=0)
    bh = tl.program_id(axis=1)
    b = bh // H
    h = bh % H

    q_blk = tl.make_block_ptr(Q + b * sq_b + h * sq_h, shape=(SEQ_Q, HEAD_DIM), strides=(sq_s, sq_d),
                              offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_D), order=(1, 0))
    kt_blk = tl.make_block_ptr(K + b * sk_b + h * sk_h, shape=(HEAD_DIM, SEQ_K), strides=(sk_d, sk_s),
                               offsets=(0, 0), block_shape=(BLOCK_D, BLOCK_N), order=(0, 1))
    v_blk = tl.make_block_ptr(V + b * sv_b + h * sv_h, shape=(SEQ_K, HEAD_DIM), strides=(sv_s, sv_d),
                              offsets=(0, 0), block_shape=(BLOCK_N, BLOCK_D), order=(1, 0))

    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)

    q = tl.load(q_blk, boundary_check=(0, 1), padding_option="zero")
    if DOT_F32:
        q = q.to(tl.float32)

    hi = SEQ_K
    if CAUSAL:
        hi = tl.minimum(SEQ_K, (start_m + 1) * BLOCK_M)
    for start_n in range(0, hi, BLOCK_N):
        kt = tl.load(kt_blk, boundary_check=(0, 1), padding_option="zero")
        v = tl.load(v_blk, boundary_check=(0, 1), padding_option="zero")
        if DOT_F32:
            s = tl.dot(q, kt.to(tl.float32), input_precision="ieee")
        else:
            s = tl.dot(q, kt)
        s = s * qk_scale
        cols = start_n + offs_n
        valid = cols[None, :] < SEQ_K
        if CAUSAL:
            valid = valid & (cols[None, :] <= offs_m[:, None])
        s = tl.where(valid, s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.math.exp2(s - m_new[:, None])
        corr = tl.math.exp2(m_i - m_new)
        l_i = l_i * corr + tl.sum(p, axis=1)
        acc = acc * corr[:, None]
        if DOT_F32:
            acc = tl.dot(p, v.to(tl.float32), acc, input_precision="ieee")
        else:
            acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new

        kt_blk = tl.advance(kt_blk, (0, BLOCK_N))
        v_blk = tl.advance(v_blk, (BLOCK_N, 0))

    acc = acc / l_i[:, None]
    o_blk = tl.make_block_ptr(O + b * so_b + h * so_h, shape=(SEQ_Q, HEAD_DIM), strides=(so_s, so_d),
                              offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_D), order=(1, 0))
    tl.store(o_blk, acc.to(O.dtype.element_ty), boundary_check=(0, 1))


def attention(q, k, v, causal: bool = False, softmax_scale=None, *, out=None):
    assert q.dim() == 4 and k.dim() == 4 and v.dim() == 4, "expected (B, H, S, D) tensors"
    assert q.dtype == k.dtype == v.dtype, "q, k and v must share a dtype"
    B, H, Sq, D = q.shape
    Sk = k.shape[2]
    assert k.shape == (B, H, Sk, D) and v.shape == (B, H, Sk, D), "k and v must be (B, H, Sk, D)"

    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(D)
    if out is None:
        out = torch.empty((B, H, Sq, D), device=q.device, dtype=q.dtype)

    BLOCK_D = max(16, triton.next_power_of_2(D))
    BLOCK_M = 64
    BLOCK_N = 64 if BLOCK_D <= 64 else 32
    # fp32 needs full-precision products; bf16 tiles go through fp32 off-GPU (Triton's interpreter)
    dot_f32 = q.dtype == torch.float32 or (q.dtype == torch.bfloat16 and q.device.type != "cuda")
    grid = (triton.cdiv(Sq, BLOCK_M), B * H)
    flash_fwd_kernel[grid](
        q, k, v, out,
        *q.stride(), *k.stride(), *v.stride(), *out.stride(),
        H, Sq, Sk, D, scale * 1.4426950408889634,
        CAUSAL=bool(causal), DOT_F32=dot_f32,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
        num_warps=4, num_stages=2,
    )
    return out


if __name__ == "__main__":
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    for (b, h, sq, sk, d), causal in [((2, 3, 64, 64, 32), False), ((1, 2, 80, 80, 64), True),
                                      ((1, 3, 37, 53, 16), True), ((2, 1, 19, 7, 24), True)]:
        q = torch.randn(b, h, sq, d, device=dev)
        k = torch.randn(b, h, sk, d, device=dev)
        v = torch.randn(b, h, sk, d, device=dev)
        mask = torch.ones(sq, sk, dtype=torch.bool, device=dev).tril() if causal else None
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        got = attention(q, k, v, causal=causal)
        print((b, h, sq, sk, d), "causal" if causal else "full", "max err", (got - ref).abs().max().item())
