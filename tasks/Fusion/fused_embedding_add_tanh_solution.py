import math

import torch
import triton
import triton.language as tl

MAX_LOOKUP_DIMS = 3


@triton.jit
def _tanh(x):
    # tanh(x) = 1 - 2 / (exp(2x) + 1): saturates cleanly to +-1 for large |x|
    return 1.0 - 2.0 / (tl.exp(2.0 * x) + 1.0)


@triton.jit
def embedding_add_tanh_kernel(idx_ptr, w_ptr, o_ptr, y_ptr, L, D, max_norm, norm_p,
                              L1, L2, os0, os1, os2, os3, stride_w,
                              NORM: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr):
    # BLOCK_L lookups per program, their whole rows in BLOCK_D chunks: (optional) row norms first,
    # then gather + rescale + add + tanh.
    rows = tl.program_id(0) * BLOCK_L + tl.arange(0, BLOCK_L)
    row_ok = rows < L
    idx = tl.load(idx_ptr + rows, mask=row_ok, other=0).to(tl.int64)
    w_row = w_ptr + idx * stride_w
    cols = tl.arange(0, BLOCK_D)
    # coordinates of each lookup among the index dims, for the broadcast `other`
    r2 = rows % L2
    rest = rows // L2
    r1 = rest % L1
    r0 = rest // L1
    o_row = o_ptr + (r0.to(tl.int64) * os0 + r1.to(tl.int64) * os1 + r2.to(tl.int64) * os2)
    y_row = y_ptr + rows.to(tl.int64) * D
    scale = tl.full((BLOCK_L,), 1.0, dtype=tl.float32)
    if NORM != 0:
        acc = tl.zeros((BLOCK_L, BLOCK_D), dtype=tl.float32)
        for d0 in range(0, D, BLOCK_D):
            m = row_ok[:, None] & ((d0 + cols) < D)[None, :]
            a = tl.abs(tl.load(w_row[:, None] + (d0 + cols)[None, :], mask=m, other=0.0).to(tl.float32))
            if NORM == 1:
                acc += a
            elif NORM == 2:
                acc += a * a
            elif NORM == 3:
                acc = tl.maximum(acc, a)
            else:
                acc += tl.where(a > 0, tl.exp(norm_p * tl.log(a)), 0.0)
        if NORM == 1:
            norm = tl.sum(acc, axis=1)
        elif NORM == 2:
            norm = tl.sqrt(tl.sum(acc, axis=1))
        elif NORM == 3:
            norm = tl.max(acc, axis=1)
        else:
            total = tl.sum(acc, axis=1)
            norm = tl.where(total > 0, tl.exp(tl.log(total) / norm_p), 0.0)
        scale = tl.where(norm > max_norm, max_norm / (norm + 1e-7), 1.0)
    for d0 in range(0, D, BLOCK_D):
        c = d0 + cols
        m = row_ok[:, None] & (c < D)[None, :]
        w = tl.load(w_row[:, None] + c[None, :], mask=m, other=0.0).to(tl.float32)
        o = tl.load(o_row[:, None] + c[None, :].to(tl.int64) * os3, mask=m, other=0.0).to(tl.float32)
        y = _tanh(w * scale[:, None] + o)
        tl.store(y_row[:, None] + c[None, :], y.to(y_ptr.dtype.element_ty), mask=m)


def _coalesce(shape, strides):
    """Drop size-1 dims and merge neighbours that every tensor walks contiguously."""
    out = []
    for size, st in zip(shape, zip(*strides)):
        if size == 1:
            continue
        if out and all(a == b * size for a, b in zip(out[-1][1], st)):
            out[-1][0] *= size
            out[-1][1] = list(st)
        else:
            out.append([size, list(st)])
    return [d[0] for d in out], [list(t) for t in zip(*[d[1] for d in out])] if out else [[], []]


def fused_embedding_add_tanh(input_indices, weight, other, *, padding_idx=None, max_norm=None, norm_type=2.0,
                             scale_grad_by_freq=False, sparse=False, out=None):
    V, D = weight.shape
    lead = tuple(input_indices.shape)
    out_shape = lead + (D,)
    idx = input_indices.reshape(-1).contiguous()
    w = weight if weight.stride(1) == 1 else weight.contiguous()
    y = torch.empty(out_shape, dtype=weight.dtype, device=weight.device)
    L = idx.numel()
    if L == 0 or D == 0:
        return y
    o = other.expand(out_shape)
    # the lookup dims of `other` (merged where possible), in row-major order of the lookups
    contiguous_lookup = [D] * len(lead)
    for i in range(len(lead) - 2, -1, -1):
        contiguous_lookup[i] = contiguous_lookup[i + 1] * lead[i + 1]
    sizes, strides = _coalesce(lead, [contiguous_lookup, o.stride()[:len(lead)]])
    o_strides = strides[1] if sizes else []
    if len(sizes) > MAX_LOOKUP_DIMS:
        raise NotImplementedError(f"more than {MAX_LOOKUP_DIMS} non-mergeable index dims")
    pad = MAX_LOOKUP_DIMS - len(sizes)
    sizes = [1] * pad + sizes
    o_strides = [0] * pad + o_strides
    if max_norm is None:
        norm, p = 0, 2.0
    elif norm_type == 1:
        norm, p = 1, 1.0
    elif norm_type == 2:
        norm, p = 2, 2.0
    elif math.isinf(norm_type) and norm_type > 0:
        norm, p = 3, 2.0
    else:
        norm, p = 4, float(norm_type)
    block_d = min(1024, triton.next_power_of_2(D))
    block_l = max(1, min(16, 2048 // block_d, triton.next_power_of_2(L)))
    grid = (triton.cdiv(L, block_l),)
    embedding_add_tanh_kernel[grid](
        idx, w, o, y, L, D, float(max_norm) if max_norm is not None else 0.0, p,
        sizes[1], sizes[2], o_strides[0], o_strides[1], o_strides[2], o.stride(-1), w.stride(0),
        NORM=norm, BLOCK_L=block_l, BLOCK_D=block_d, num_warps=4 if block_l * block_d <= 2048 else 8)
    if out is not None:
        out.copy_(y)
        return out
    return y
