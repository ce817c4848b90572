import math

import torch
import triton
import triton.language as tl


@triton.jit
def cosine_kernel(x1_ptr, x2_ptr, out_ptr, R, I, stride_o, stride_r, stride_i, p, eps_norm, eps_sim,
                  P_KIND: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    # for every column (o, i): reduce over r in one pass, then
    # out[o*I + i] = cos(x1 / max(||x1||_p, eps_norm), x2 / max(||x2||_p, eps_norm)) with eps_sim
    o = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_I + tl.arange(0, BLOCK_I)
    col_ok = cols < I
    rs = tl.arange(0, BLOCK_R)
    base = o * stride_o + cols[None, :] * stride_i
    s11 = tl.zeros((BLOCK_R, BLOCK_I), dtype=tl.float32)
    s22 = tl.zeros((BLOCK_R, BLOCK_I), dtype=tl.float32)
    s12 = tl.zeros((BLOCK_R, BLOCK_I), dtype=tl.float32)
    s1p = tl.zeros((BLOCK_R, BLOCK_I), dtype=tl.float32)
    s2p = tl.zeros((BLOCK_R, BLOCK_I), dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + rs
        mask = (r < R)[:, None] & col_ok[None, :]
        offs = base + r.to(tl.int64)[:, None] * stride_r
        a = tl.load(x1_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(x2_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        s11 += a * a
        s22 += b * b
        s12 += a * b
        if P_KIND == 1:
            s1p += tl.abs(a)
            s2p += tl.abs(b)
        elif P_KIND == 0:
            # |v| ** p; log2(0) = -inf gives exp2(-inf) = 0
            s1p += tl.exp2(p * tl.log2(tl.abs(a)))
            s2p += tl.exp2(p * tl.log2(tl.abs(b)))
    t11 = tl.sum(s11, axis=0)
    t22 = tl.sum(s22, axis=0)
    t12 = tl.sum(s12, axis=0)
    if P_KIND == 2:
        n1 = tl.sqrt(t11)
        n2 = tl.sqrt(t22)
    elif P_KIND == 1:
        n1 = tl.sum(s1p, axis=0)
        n2 = tl.sum(s2p, axis=0)
    else:
        t1p = tl.sum(s1p, axis=0)
        t2p = tl.sum(s2p, axis=0)
        n1 = tl.where(t1p > 0, tl.exp2(tl.log2(t1p) / p), 0.0)
        n2 = tl.where(t2p > 0, tl.exp2(tl.log2(t2p) / p), 0.0)
    # scale factors of the normalization, then the L2 norms of the normalized vectors
    a1 = 1.0 / tl.maximum(n1, eps_norm)
    a2 = 1.0 / tl.maximum(n2, eps_norm)
    u = tl.maximum(a1 * tl.sqrt(t11), eps_sim)
    v = tl.maximum(a2 * tl.sqrt(t22), eps_sim)
    cos = (a1 / u) * (a2 / v) * t12
    tl.store(out_ptr + o * I + cols, cos.to(out_ptr.dtype.element_ty), mask=col_ok)


def normalized_cosine_similarity(x1, x2, dim=1, eps_similarity=1e-8, p_norm=2, eps_norm=1e-12):
    shape = list(torch.broadcast_shapes(x1.shape, x2.shape))
    nd = len(shape)
    dim = dim % nd
    # both operands as contiguous tensors of the broadcast shape (a copy only where x2 broadcasts)
    a = x1 if list(x1.shape) == shape else x1.expand(shape)
    b = x2 if list(x2.shape) == shape else x2.expand(shape)
    a = a.contiguous()
    b = b.contiguous()
    O = math.prod(shape[:dim])
    R = shape[dim]
    I = math.prod(shape[dim + 1:])
    out_shape = shape[:dim] + shape[dim + 1:]
    out = torch.empty(out_shape, device=x1.device, dtype=x1.dtype)
    if I == 1:
        # reduce along contiguous rows: treat each of the O rows as one column
        grid_o, cols, stride_o, stride_r, stride_i = 1, O, 0, 1, R
    else:
        grid_o, cols, stride_o, stride_r, stride_i = O, I, R * I, I, 1
    block_i = max(16, min(64, triton.next_power_of_2(cols)))
    block_r = max(16, min(256, 4096 // block_i, triton.next_power_of_2(R)))
    p_kind = 1 if p_norm == 1 else 2 if p_norm == 2 else 0
    cosine_kernel[(grid_o, triton.cdiv(cols, block_i))](
        a, b, out, R, cols, stride_o, stride_r, stride_i, float(p_norm), float(eps_norm), float(eps_similarity),
        P_KIND=p_kind, BLOCK_R=block_r, BLOCK_I=block_i, num_warps=4)
    return out
