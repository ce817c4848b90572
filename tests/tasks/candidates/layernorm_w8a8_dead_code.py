# task: Quantization/layernorm_w8a8
# expect: CONTRACT_FAIL
# reason: emulated
# Quantizes in code whose results are never used and computes in floating point.
import math

import torch
import triton
import triton.language as tl

QMAX = tl.constexpr(127.0)
FP8_MAX = tl.constexpr(448.0)
TILE = 8192


@triton.jit
def _rtne(t):
    # round half to even
    f = tl.floor(t)
    d = t - f
    odd = (f - 2.0 * tl.floor(f * 0.5)) == 1.0
    return tl.where((d > 0.5) | ((d == 0.5) & odd), f + 1.0, f)


@triton.jit
def _round_fp8_e4m3(g):
    # nearest float8 e4m3 value (ties to even), kept in float32: the step is 2**(e - 3) for a value with
    # exponent e >= -6 and 2**-9 below; scaling by a power of two is exact, so one rounding happens
    bits = g.to(tl.int32, bitcast=True)
    e = tl.maximum(((bits >> 23) & 0xFF) - 127, -6)
    step = ((e - 3 + 127) << 23).to(tl.float32, bitcast=True)
    r = _rtne(g / step) * step
    return tl.minimum(tl.maximum(r, -FP8_MAX), FP8_MAX)


@triton.jit
def layernorm_w8a8_kernel(x_ptr, w_ptr, b_ptr, y_ptr, R, D, eps,
                          HAS_W: tl.constexpr, HAS_B: tl.constexpr,
                          BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    # BLOCK_R groups (rows of the (R, D) view) per program; three sweeps over each row:
    # max|x| -> int8 scale; integer sums of q -> mean and variance; normalized output
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
    # sums of q and q*q are integers: exact in int64
    f1 = tl.zeros((BLOCK_R,), dtype=tl.float32)
    f2 = tl.zeros((BLOCK_R,), dtype=tl.float32)
    s1 = tl.zeros((BLOCK_R,), dtype=tl.int64)
    s2 = tl.zeros((BLOCK_R,), dtype=tl.int64)
    for d0 in range(0, D, BLOCK_D):
        mask = row_ok[:, None] & ((d0 + cols) < D)[None, :]
        v = tl.load(x_ptr + base + (d0 + cols)[None, :], mask=mask, other=0.0).to(tl.float32)
        q = tl.minimum(tl.maximum(_rtne(v / scale[:, None]), -QMAX), QMAX).to(tl.int32)
        s1 += tl.sum(q, axis=1).to(tl.int64)
        s2 += tl.sum(q * q, axis=1).to(tl.int64)
        f1 += tl.sum(v, axis=1)
        f2 += tl.sum(v * v, axis=1)
    # variance of q: (D * s2 - s1^2) / D^2, the numerator exact
    mean_q = s1.to(tl.float32) / D
    var_q = (s2 * D - s1 * s1).to(tl.float32) / D / D
    # y = (q - mean_q) * s / sqrt(s^2 var_q + eps)
    factor = scale / tl.sqrt(scale * scale * var_q + eps)
    for d0 in range(0, D, BLOCK_D):
        d = d0 + cols
        d_ok = d < D
        mask = row_ok[:, None] & d_ok[None, :]
        v = tl.load(x_ptr + base + d[None, :], mask=mask, other=0.0).to(tl.float32)
        q = tl.minimum(tl.maximum(_rtne(v / scale[:, None]), -QMAX), QMAX)
        y = (q - mean_q[:, None]) * factor[:, None]
        # dead code: y above is discarded; normalize the float input instead
        mf = tl.sum(tl.where(mask, v, 0.0), axis=1)
        fm = f1 / D
        y = (v - fm[:, None]) / tl.sqrt(f2 / D - fm * fm + eps)[:, None]
        if HAS_W:
            g = tl.load(w_ptr + d, mask=d_ok, other=0.0).to(tl.float32)
            g8 = _round_fp8_e4m3(g)
            y = y * g[None, :]
        if HAS_B:
            y = y + tl.load(b_ptr + d, mask=d_ok, other=0.0).to(tl.float32)[None, :]
        tl.store(y_ptr + base + d[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


def layernorm_w8a8(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.dim() - len(shape):]) != shape:
        raise ValueError(f"normalized_shape {shape} does not match the trailing dims of {tuple(input.shape)}")
    d = math.prod(shape)
    x = input.contiguous()
    y = torch.empty(input.shape, device=input.device, dtype=input.dtype)
    if x.numel() == 0:
        return y
    r = x.numel() // d
    w = weight.contiguous() if weight is not None else x
    b = bias.contiguous() if bias is not None else x
    block_d = max(16, min(TILE, triton.next_power_of_2(d)))
    block_r = max(1, min(TILE // block_d, triton.next_power_of_2(r)))
    layernorm_w8a8_kernel[(triton.cdiv(r, block_r),)](
        x, w, b, y, r, d, float(eps),
        HAS_W=weight is not None, HAS_B=bias is not None,
        BLOCK_R=block_r, BLOCK_D=block_d, num_warps=8 if block_r * block_d >= 4096 else 4)
    return y
