import math

import torch
import triton
import triton.language as tl

TILE = 4096             # elements per loaded tile
TARGET_PROGRAMS = 1024  # split long reductions until about this many programs run
BIG_INDEX = tl.constexpr(2**62)
SQRT_HALF = tl.constexpr(0.7071067811865476)
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)


@triton.jit
def _gelu(x, TANH: tl.constexpr):
    if TANH:
        inner = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    else:
        return 0.5 * x * (1.0 + tl.erf(x * SQRT_HALF))


@triton.jit
def gelu_min_kernel(x_ptr, pval_ptr, pidx_ptr, val_ptr, idx_ptr, R, I, stride_o, stride_r, stride_i,
                    chunk, SPLIT, i_blocks,
                    TANH: tl.constexpr, FINAL: tl.constexpr, WITH_INDEX: tl.constexpr,
                    BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    # The input is viewed as (O, R, I) with the given strides, reduced over R; the result is (O, I).
    # Program (o, i-block, split) finds the minimum of GELU over [split * chunk, (split + 1) * chunk)
    # along R and its first position there. Rows of a contiguous (rows, R) input come as I = rows with
    # stride_r = 1, so one program reduces BLOCK_I short rows at once.
    pid = tl.program_id(0)
    s = tl.program_id(1)
    o = pid // i_blocks
    i = (pid % i_blocks) * BLOCK_I + tl.arange(0, BLOCK_I)
    i_ok = i < I
    r_start = s * chunk
    r_end = tl.minimum(r_start + chunk, R)
    base = x_ptr + o.to(tl.int64) * stride_o + i.to(tl.int64)[None, :] * stride_i
    best = tl.full((BLOCK_I,), float("inf"), dtype=tl.float32)
    best_idx = tl.full((BLOCK_I,), 0, dtype=tl.int64)
    for r0 in range(r_start, r_end, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = (r < r_end)[:, None] & i_ok[None, :]
        x = tl.load(base + r.to(tl.int64)[:, None] * stride_r, mask=m, other=0.0).to(tl.float32)
        g = tl.where(m, _gelu(x, TANH), float("inf"))
        t_min = tl.min(g, axis=0)
        t_idx = tl.min(tl.where(g == t_min[None, :], r.to(tl.int64)[:, None], BIG_INDEX), axis=0)
        better = t_min < best  # strict: on ties the earlier tile (smaller index) stays
        best_idx = tl.where(better, t_idx, best_idx)
        best = tl.where(better, t_min, best)
    if FINAL:
        tl.store(val_ptr + o.to(tl.int64) * I + i, best.to(val_ptr.dtype.element_ty), mask=i_ok)
        if WITH_INDEX:
            tl.store(idx_ptr + o.to(tl.int64) * I + i, best_idx, mask=i_ok)
    else:
        out = (o.to(tl.int64) * SPLIT + s) * I + i
        tl.store(pval_ptr + out, best, mask=i_ok)
        tl.store(pidx_ptr + out, best_idx, mask=i_ok)


@triton.jit
def min_finalize_kernel(pval_ptr, pidx_ptr, val_ptr, idx_ptr, OI, I, SPLIT,
                        WITH_INDEX: tl.constexpr, BLOCK: tl.constexpr, BLOCK_S: tl.constexpr):
    # partials laid out (O, SPLIT, I): the smallest value, and on ties the smallest position
    k = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    k_ok = k < OI
    o = (k // I).to(tl.int64)
    i = k % I
    best = tl.full((BLOCK,), float("inf"), dtype=tl.float32)
    best_idx = tl.full((BLOCK,), 0, dtype=tl.int64)
    for s0 in range(0, SPLIT, BLOCK_S):
        s = s0 + tl.arange(0, BLOCK_S)
        m = (s < SPLIT)[:, None] & k_ok[None, :]
        idx = (o[None, :] * SPLIT + s[:, None]) * I + i[None, :]
        v = tl.load(pval_ptr + idx, mask=m, other=float("inf"))
        p = tl.load(pidx_ptr + idx, mask=m, other=0)
        t_min = tl.min(v, axis=0)
        t_idx = tl.min(tl.where(m & (v == t_min[None, :]), p, BIG_INDEX), axis=0)
        better = t_min < best
        best_idx = tl.where(better, t_idx, best_idx)
        best = tl.where(better, t_min, best)
    tl.store(val_ptr + k, best.to(val_ptr.dtype.element_ty), mask=k_ok)
    if WITH_INDEX:
        tl.store(idx_ptr + k, best_idx, mask=k_ok)


def fused_gelu_min(input, approximate="none", dim=None, keepdim=False, out=None):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    x = input.contiguous()
    shape = list(x.shape)
    with_index = dim is not None
    if dim is None:
        O, R, I = 1, x.numel(), 1
        out_shape = []
    else:
        d = dim % max(x.dim(), 1)
        O = math.prod(shape[:d])
        R = shape[d] if x.dim() else 1
        I = math.prod(shape[d + 1:])
        out_shape = shape[:d] + ([1] if keepdim else []) + shape[d + 1:]
    if R == 0:
        raise ValueError("min of an empty dimension")
    values = torch.empty(O * I, dtype=input.dtype, device=input.device)
    indices = torch.empty(O * I, dtype=torch.int64, device=input.device)
    tanh = approximate == "tanh"
    # strides of the (O, R, I) view; a contiguous (rows, R) input is read as (1, R, rows)
    stride_o, stride_r, stride_i = R * I, I, 1
    if I == 1:
        O, I, stride_o, stride_r, stride_i = 1, O, 0, 1, R
        block_r = min(TILE, triton.next_power_of_2(R))
        block_i = max(1, min(TILE // block_r, triton.next_power_of_2(I)))
    else:
        block_i = min(128, triton.next_power_of_2(I))
        block_r = max(1, min(TILE // block_i, triton.next_power_of_2(R)))
    i_blocks = triton.cdiv(I, block_i)
    r_blocks = triton.cdiv(R, block_r)
    split = max(1, min(r_blocks, triton.cdiv(TARGET_PROGRAMS, O * i_blocks)))
    chunk = triton.cdiv(r_blocks, split) * block_r
    split = triton.cdiv(R, chunk)
    warps = 8 if block_r * block_i >= 4096 else 4
    if split == 1:
        gelu_min_kernel[(O * i_blocks, 1)](x, values, indices, values, indices, R, I, stride_o, stride_r, stride_i,
                                           chunk, 1, i_blocks,
                                           TANH=tanh, FINAL=True, WITH_INDEX=with_index,
                                           BLOCK_R=block_r, BLOCK_I=block_i, num_warps=warps)
    else:
        pval = torch.empty((O, split, I), dtype=torch.float32, device=input.device)
        pidx = torch.empty((O, split, I), dtype=torch.int64, device=input.device)
        gelu_min_kernel[(O * i_blocks, split)](x, pval, pidx, values, indices, R, I, stride_o, stride_r, stride_i,
                                               chunk, split, i_blocks,
                                               TANH=tanh, FINAL=False, WITH_INDEX=with_index,
                                               BLOCK_R=block_r, BLOCK_I=block_i, num_warps=warps)
        block_s = min(64, triton.next_power_of_2(split))
        block = max(1, min(1024, 4096 // block_s, triton.next_power_of_2(O * I)))
        min_finalize_kernel[(triton.cdiv(O * I, block),)](pval, pidx, values, indices, O * I, I, split,
                                                          WITH_INDEX=with_index, BLOCK=block, BLOCK_S=block_s,
                                                          num_warps=4)
    if not with_index:
        return values.reshape(())
    return values.reshape(out_shape), indices.reshape(out_shape)
