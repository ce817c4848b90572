import math

import torch
import triton
import triton.language as tl

TILE = 4096        # elements per loaded tile
SCAN_BLOCK = 1024  # counts scanned per step


@triton.jit
def counts_scan_kernel(rep_ptr, ends_ptr, total_ptr, L, BLOCK: tl.constexpr):
    # one program: ends[l] = repeats[0] + ... + repeats[l] (where copy l stops), and the total
    carry = tl.zeros((1,), dtype=tl.int64)
    for l0 in range(0, L, BLOCK):
        l = l0 + tl.arange(0, BLOCK)
        r = tl.load(rep_ptr + l, mask=l < L, other=0).to(tl.int64)
        ends = tl.cumsum(r, axis=0) + carry
        tl.store(ends_ptr + l, ends, mask=l < L)
        carry += tl.sum(r, axis=0)
    tl.store(total_ptr + tl.arange(0, 1), carry)


@triton.jit
def source_index_kernel(ends_ptr, src_ptr, L, J, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    # src[j] = the input index whose copies cover position j = the number of l with ends[l] <= j
    j = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    lo = tl.zeros((BLOCK,), dtype=tl.int64)
    hi = tl.zeros((BLOCK,), dtype=tl.int64) + L
    for _ in tl.static_range(STEPS):
        active = lo < hi
        mid = (lo + hi) // 2
        e = tl.load(ends_ptr + mid, mask=active & (j < J), other=0)
        go_right = active & (e <= j)
        lo = tl.where(go_right, mid + 1, lo)
        hi = tl.where(active & ~go_right, mid, hi)
    tl.store(src_ptr + j, lo.to(tl.int32), mask=j < J)


@triton.jit
def repeat_log_softmax_kernel(x_ptr, rep_ptr, src_ptr, y_ptr, L, I, J, r_int,
                              sx_o, sx_l, sx_i, sy_o, sy_j, sy_i, i_blocks,
                              TENSOR_REPS: tl.constexpr, ROUND: tl.constexpr,
                              BLOCK_L: tl.constexpr, BLOCK_I: tl.constexpr):
    # The input is viewed as (O, L, I) and the output as (O, J, I) with the given strides; program
    # (o, i-block) handles BLOCK_I slices. Pass 1: log of the count-weighted sum of exp over the L input
    # values (running maximum over values with a positive count). Pass 2: out[o, j, i] = x[o, src(j), i]
    # minus that, with src(j) = j // r_int, or read from src_ptr for per-index counts.
    pid = tl.program_id(0)
    o = (pid // i_blocks).to(tl.int64)
    i = (pid % i_blocks) * BLOCK_I + tl.arange(0, BLOCK_I)
    i_ok = i < I
    x_base = x_ptr + o * sx_o + i.to(tl.int64)[None, :] * sx_i
    y_base = y_ptr + o * sy_o + i.to(tl.int64)[None, :] * sy_i
    ls = tl.arange(0, BLOCK_L)
    m = tl.full((BLOCK_I,), -1.0e30, dtype=tl.float32)
    s = tl.zeros((BLOCK_I,), dtype=tl.float32)
    for l0 in range(0, L, BLOCK_L):
        l = l0 + ls
        l_ok = l < L
        if TENSOR_REPS:
            w = tl.load(rep_ptr + l, mask=l_ok, other=0).to(tl.float32)
        else:
            w = tl.where(l_ok, 1.0, 0.0)
        valid = (w > 0.0)[:, None] & i_ok[None, :]
        x = tl.load(x_base + l.to(tl.int64)[:, None] * sx_l, mask=valid, other=float("-inf"))
        if ROUND:
            x = x.to(y_ptr.dtype.element_ty)
        x = x.to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(w[:, None] * tl.exp(x - m_new[None, :]), axis=0)
        m = m_new
    lse = m + tl.log(s)
    if not TENSOR_REPS:
        lse += tl.log(r_int.to(tl.float32))
    for j0 in range(0, J, BLOCK_L):
        j = j0 + ls
        j_ok = j < J
        if TENSOR_REPS:
            src = tl.load(src_ptr + j, mask=j_ok, other=0)
        else:
            src = j // r_int
        mask = j_ok[:, None] & i_ok[None, :]
        x = tl.load(x_base + src.to(tl.int64)[:, None] * sx_l, mask=mask, other=0.0)
        if ROUND:
            x = x.to(y_ptr.dtype.element_ty)
        y = x.to(tl.float32) - lse[None, :]
        tl.store(y_base + j.to(tl.int64)[:, None] * sy_j, y.to(y_ptr.dtype.element_ty), mask=mask)


def fused_repeat_interleave_log_softmax(input, repeats, dim=None, *, output_size=None, dtype=None, out=None):
    out_dtype = input.dtype if dtype is None else dtype
    if dim is None:
        x = input.reshape(-1)
        d = 0
    else:
        x = input
        d = dim % max(input.dim(), 1)
    x = x.contiguous()
    shape = list(x.shape)
    O = math.prod(shape[:d])
    L = shape[d] if x.dim() else 1
    I = math.prod(shape[d + 1:])
    device = x.device
    tensor_reps = isinstance(repeats, torch.Tensor)
    if tensor_reps:
        reps = repeats.reshape(-1).contiguous()
        if reps.numel() == 1 and L != 1:
            reps = reps.expand(L).contiguous()
        if reps.numel() != L:
            raise ValueError("repeats must have one count per index along dim")
        ends = torch.empty(L, dtype=torch.int64, device=device)
        total = torch.empty(1, dtype=torch.int64, device=device)
        counts_scan_kernel[(1,)](reps, ends, total, L, BLOCK=SCAN_BLOCK, num_warps=4)
        J = int(output_size) if output_size is not None else int(total.item())
        r_int = 1
    else:
        r_int = int(repeats)
        reps = ends = None
        J = L * r_int if output_size is None else int(output_size)
    out_shape = shape[:d] + [J] + shape[d + 1:]
    y = torch.empty(out_shape, dtype=out_dtype, device=device)
    if y.numel() == 0:
        return y
    if tensor_reps:
        src = torch.empty(J, dtype=torch.int32, device=device)
        block = 1024
        steps = max(1, (L + 1).bit_length())
        source_index_kernel[(triton.cdiv(J, block),)](ends, src, L, J, STEPS=steps, BLOCK=block, num_warps=4)
    else:
        src = y
        reps = y
    # strides of the (O, L, I) and (O, J, I) views; slices along the last dim are read as (1, L, rows)
    sx_o, sx_l, sx_i = L * I, I, 1
    sy_o, sy_j, sy_i = J * I, I, 1
    if I == 1:
        O, I = 1, O
        sx_o, sx_l, sx_i = 0, 1, L
        sy_o, sy_j, sy_i = 0, 1, J
        block_l = min(TILE, triton.next_power_of_2(max(L, J)))
        block_i = max(1, min(TILE // block_l, triton.next_power_of_2(I)))
    else:
        block_i = min(128, triton.next_power_of_2(I))
        block_l = max(1, min(TILE // block_i, triton.next_power_of_2(max(L, J))))
    i_blocks = triton.cdiv(I, block_i)
    round_first = dtype is not None and dtype != input.dtype
    repeat_log_softmax_kernel[(O * i_blocks,)](
        x, reps, src, y, L, I, J, r_int, sx_o, sx_l, sx_i, sy_o, sy_j, sy_i, i_blocks,
        TENSOR_REPS=tensor_reps, ROUND=round_first, BLOCK_L=block_l, BLOCK_I=block_i,
        num_warps=8 if block_l * block_i >= 4096 else 4)
    if out is not None:
        out.copy_(y)
        return out
    return y
