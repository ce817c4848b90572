import math

import torch
import triton
import triton.language as tl

TILE = 4096             # elements per loaded tile
TARGET_PROGRAMS = 1024  # split long reductions until about this many programs run
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
def gelu_stats_kernel(x_ptr, cnt_ptr, mean_ptr, m2_ptr, y_ptr, R, I, stride_o, stride_r, stride_i, chunk, SPLIT,
                      correction, i_blocks,
                      TANH: tl.constexpr, FINAL: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    # The input is viewed as (O, R, I) with the given strides, reduced over R; the result is (O, I).
    # Rows of a contiguous (rows, R) input come as I = rows with stride_r = 1, so one program reduces
    # BLOCK_I short rows at once. Program (o, i-block, split) reduces rows
    # [split * chunk, (split + 1) * chunk) to (count, mean, M2) per column, merging tiles with Chan's
    # update; with FINAL it writes the standard deviation directly.
    pid = tl.program_id(0)
    s = tl.program_id(1)
    o = pid // i_blocks
    i = (pid % i_blocks) * BLOCK_I + tl.arange(0, BLOCK_I)
    i_ok = i < I
    r_start = s * chunk
    r_end = tl.minimum(r_start + chunk, R)
    base = x_ptr + o.to(tl.int64) * stride_o + i.to(tl.int64)[None, :] * stride_i
    cnt = tl.zeros((BLOCK_I,), dtype=tl.float32)
    mean = tl.zeros((BLOCK_I,), dtype=tl.float32)
    m2 = tl.zeros((BLOCK_I,), dtype=tl.float32)
    for r0 in range(r_start, r_end, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = (r < r_end)[:, None] & i_ok[None, :]
        x = tl.load(base + r.to(tl.int64)[:, None] * stride_r, mask=m, other=0.0).to(tl.float32)
        g = tl.where(m, _gelu(x, TANH), 0.0)
        t_cnt = tl.sum(m.to(tl.float32), axis=0)
        t_mean = tl.sum(g, axis=0) / tl.maximum(t_cnt, 1.0)
        d = tl.where(m, g - t_mean[None, :], 0.0)
        t_m2 = tl.sum(d * d, axis=0)
        total = tl.maximum(cnt + t_cnt, 1.0)
        delta = t_mean - mean
        mean = mean + delta * (t_cnt / total)
        m2 = m2 + t_m2 + delta * delta * (cnt * t_cnt / total)
        cnt = cnt + t_cnt
    if FINAL:
        std = tl.sqrt(m2 / tl.maximum(cnt - correction, 0.0))
        tl.store(y_ptr + o.to(tl.int64) * I + i, std.to(y_ptr.dtype.element_ty), mask=i_ok)
    else:
        out = (o.to(tl.int64) * SPLIT + s) * I + i
        tl.store(cnt_ptr + out, cnt, mask=i_ok)
        tl.store(mean_ptr + out, mean, mask=i_ok)
        tl.store(m2_ptr + out, m2, mask=i_ok)


@triton.jit
def std_finalize_kernel(cnt_ptr, mean_ptr, m2_ptr, y_ptr, OI, I, SPLIT, correction,
                        BLOCK: tl.constexpr, BLOCK_S: tl.constexpr):
    # partials laid out (O, SPLIT, I): merge the SPLIT (count, mean, M2) triples of each output
    k = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    k_ok = k < OI
    o = (k // I).to(tl.int64)
    i = k % I
    cnt = tl.zeros((BLOCK,), dtype=tl.float32)
    mean = tl.zeros((BLOCK,), dtype=tl.float32)
    m2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for s0 in range(0, SPLIT, BLOCK_S):
        s = s0 + tl.arange(0, BLOCK_S)
        m = (s < SPLIT)[:, None] & k_ok[None, :]
        idx = (o[None, :] * SPLIT + s[:, None]) * I + i[None, :]
        p_cnt = tl.load(cnt_ptr + idx, mask=m, other=0.0)
        p_mean = tl.load(mean_ptr + idx, mask=m, other=0.0)
        p_m2 = tl.load(m2_ptr + idx, mask=m, other=0.0)
        t_cnt = tl.sum(p_cnt, axis=0)
        t_mean = tl.sum(p_cnt * p_mean, axis=0) / tl.maximum(t_cnt, 1.0)
        dev = tl.where(m, p_mean - t_mean[None, :], 0.0)
        t_m2 = tl.sum(p_m2 + p_cnt * dev * dev, axis=0)
        total = tl.maximum(cnt + t_cnt, 1.0)
        delta = t_mean - mean
        mean = mean + delta * (t_cnt / total)
        m2 = m2 + t_m2 + delta * delta * (cnt * t_cnt / total)
        cnt = cnt + t_cnt
    std = tl.sqrt(m2 / tl.maximum(cnt - correction, 0.0))
    tl.store(y_ptr + k, std.to(y_ptr.dtype.element_ty), mask=k_ok)


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


def fused_gelu_std(input, dim=None, keepdim=False, correction=1, approximate="none", out=None):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    xv, O, R, I, keep_shape, drop_shape = _plan(input, dim)
    y = torch.empty(O * I, dtype=input.dtype, device=input.device)
    if O * I == 0:
        return y.reshape(keep_shape if keepdim else drop_shape)
    correction = float(1 if correction is None else correction)
    tanh = approximate == "tanh"
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
        gelu_stats_kernel[(O * i_blocks, 1)](xv, y, y, y, y, R, I, stride_o, stride_r, stride_i, chunk, 1,
                                             correction, i_blocks,
                                             TANH=tanh, FINAL=True, BLOCK_R=block_r, BLOCK_I=block_i,
                                             num_warps=warps)
    else:
        cnt = torch.empty((O, split, I), dtype=torch.float32, device=input.device)
        mean = torch.empty_like(cnt)
        m2 = torch.empty_like(cnt)
        gelu_stats_kernel[(O * i_blocks, split)](xv, cnt, mean, m2, y, R, I, stride_o, stride_r, stride_i, chunk,
                                                 split, correction, i_blocks,
                                                 TANH=tanh, FINAL=False, BLOCK_R=block_r, BLOCK_I=block_i,
                                                 num_warps=warps)
        block_s = min(64, triton.next_power_of_2(split))
        block = max(1, min(1024, 4096 // block_s, triton.next_power_of_2(O * I)))
        std_finalize_kernel[(triton.cdiv(O * I, block),)](cnt, mean, m2, y, O * I, I, split, correction,
                                                          BLOCK=block, BLOCK_S=block_s, num_warps=4)
    result = y.reshape(keep_shape if keepdim else drop_shape)
    if out is not None:
        out.copy_(result)
        return out
    return result
