import math

import torch
import triton
import triton.language as tl

TILE = 4096            # elements per loaded tile
TARGET_PROGRAMS = 1024  # split long reductions until about this many programs run


@triton.jit
def exp_sum_kernel(x_ptr, part_ptr, y_ptr, R, I, stride_o, stride_r, stride_i, chunk, SPLIT, inv_count,
                   i_blocks,
                   FINAL: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    # The input is viewed as (O, R, I) with the given strides, reduced over R; the result is (O, I).
    # Rows of a contiguous (rows, R) input come as I = rows with stride_r = 1, so one program reduces
    # BLOCK_I short rows at once. Program (o, i-block, split) sums exp over
    # rows [split * chunk, (split + 1) * chunk) of R; with FINAL it writes the mean directly.
    pid = tl.program_id(0)
    s = tl.program_id(1)
    o = pid // i_blocks
    i = (pid % i_blocks) * BLOCK_I + tl.arange(0, BLOCK_I)
    i_ok = i < I
    r_start = s * chunk
    r_end = tl.minimum(r_start + chunk, R)
    base = x_ptr + o.to(tl.int64) * stride_o + i.to(tl.int64)[None, :] * stride_i
    acc = tl.zeros((BLOCK_R, BLOCK_I), dtype=tl.float32)
    for r0 in range(r_start, r_end, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = (r < r_end)[:, None] & i_ok[None, :]
        x = tl.load(base + r.to(tl.int64)[:, None] * stride_r, mask=m, other=0.0)
        acc += tl.where(m, tl.exp(x.to(tl.float32)), 0.0)
    total = tl.sum(acc, axis=0)
    if FINAL:
        tl.store(y_ptr + o.to(tl.int64) * I + i, (total * inv_count).to(y_ptr.dtype.element_ty), mask=i_ok)
    else:
        tl.store(part_ptr + (o.to(tl.int64) * SPLIT + s) * I + i, total, mask=i_ok)


@triton.jit
def mean_finalize_kernel(part_ptr, y_ptr, OI, I, SPLIT, inv_count,
                         BLOCK: tl.constexpr, BLOCK_S: tl.constexpr):
    # partial sums laid out (O, SPLIT, I): add the SPLIT partials of each output element
    k = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    k_ok = k < OI
    o = (k // I).to(tl.int64)
    i = k % I
    acc = tl.zeros((BLOCK_S, BLOCK), dtype=tl.float32)
    for s0 in range(0, SPLIT, BLOCK_S):
        s = s0 + tl.arange(0, BLOCK_S)
        m = (s < SPLIT)[:, None] & k_ok[None, :]
        acc += tl.load(part_ptr + (o[None, :] * SPLIT + s[:, None]) * I + i[None, :], mask=m, other=0.0)
    tl.store(y_ptr + k, (tl.sum(acc, axis=0) * inv_count).to(y_ptr.dtype.element_ty), mask=k_ok)


def _plan(x, dim):
    """View x as (O, R, I) reduced over R: the tensor to read, O, R, I and the result's shapes."""
    ndim = x.dim()
    if dim is None:
        reduced = list(range(ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        reduced = sorted({d % max(ndim, 1) for d in dims}) if ndim else []
    shape = list(x.shape)
    kept = [d for d in range(ndim) if d not in reduced]
    keep_shape = [1 if d in reduced else s for d, s in enumerate(shape)]
    drop_shape = [shape[d] for d in kept]
    if not reduced:
        return x.contiguous(), math.prod(shape), 1, 1, keep_shape, drop_shape
    if reduced == list(range(reduced[0], reduced[-1] + 1)):
        a, b = reduced[0], reduced[-1]
        O = math.prod(shape[:a])
        R = math.prod(shape[a:b + 1])
        I = math.prod(shape[b + 1:])
        return x.contiguous(), O, R, I, keep_shape, drop_shape
    xt = x.permute(kept + reduced).contiguous()
    return xt, math.prod(drop_shape), math.prod(shape[d] for d in reduced), 1, keep_shape, drop_shape


def fused_exp_mean(input, dim=None, keepdim=False, dtype=None, out=None):
    out_dtype = dtype if dtype is not None else input.dtype
    xv, O, R, I, keep_shape, drop_shape = _plan(input, dim)
    y = torch.empty(O * I, dtype=out_dtype, device=input.device)
    if O * I == 0:
        return y.reshape(keep_shape if keepdim else drop_shape)
    inv_count = 1.0 / R if R > 0 else float("nan")
    # strides of the (O, R, I) view; a contiguous (rows, R) input is read as (1, R, rows)
    stride_o, stride_r, stride_i = R * I, I, 1
    if I == 1:
        O, I, stride_o, stride_r, stride_i = 1, O, 0, 1, R
        block_r = min(TILE, triton.next_power_of_2(max(R, 1)))
        block_i = max(1, min(TILE // block_r, triton.next_power_of_2(I)))
    else:
        block_i = min(128, triton.next_power_of_2(I))
        block_r = max(1, min(TILE // block_i, triton.next_power_of_2(max(R, 1))))
    i_blocks = triton.cdiv(I, block_i)
    r_blocks = max(1, triton.cdiv(R, block_r))
    split = max(1, min(r_blocks, triton.cdiv(TARGET_PROGRAMS, O * i_blocks)))
    chunk = triton.cdiv(r_blocks, split) * block_r
    split = max(1, triton.cdiv(R, chunk))
    warps = 8 if block_r * block_i >= 4096 else 4
    if split == 1:
        exp_sum_kernel[(O * i_blocks, 1)](xv, y, y, R, I, stride_o, stride_r, stride_i, chunk, 1, inv_count,
                                          i_blocks, FINAL=True, BLOCK_R=block_r, BLOCK_I=block_i, num_warps=warps)
    else:
        part = torch.empty((O, split, I), dtype=torch.float32, device=input.device)
        exp_sum_kernel[(O * i_blocks, split)](xv, part, y, R, I, stride_o, stride_r, stride_i, chunk, split,
                                              inv_count, i_blocks, FINAL=False, BLOCK_R=block_r, BLOCK_I=block_i,
                                              num_warps=warps)
        block_s = min(64, triton.next_power_of_2(split))
        block = max(1, min(1024, 4096 // block_s, triton.next_power_of_2(O * I)))
        mean_finalize_kernel[(triton.cdiv(O * I, block),)](part, y, O * I, I, split, inv_count,
                                                           BLOCK=block, BLOCK_S=block_s, num_warps=4)
    result = y.reshape(keep_shape if keepdim else drop_shape)
    if out is not None:
        out.copy_(result)
        return out
    return result
