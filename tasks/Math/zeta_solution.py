import torch
import triton
import triton.language as tl

MAX_DIMS = 4
# Terms summed directly before the Euler-Maclaurin tail starts at a = q + SHIFT.
SHIFT = tl.constexpr(9)
# Bernoulli numbers B2, B4, ..., B12 divided by (2j)!.
B2 = tl.constexpr(1.0 / 6.0 / 2.0)
B4 = tl.constexpr(-1.0 / 30.0 / 24.0)
B6 = tl.constexpr(1.0 / 42.0 / 720.0)
B8 = tl.constexpr(-1.0 / 30.0 / 40320.0)
B10 = tl.constexpr(5.0 / 66.0 / 3628800.0)
B12 = tl.constexpr(-691.0 / 2730.0 / 479001600.0)


@triton.jit
def _pow_neg(b, s):
    # b^-s for normal b > 0 with a small exponent error: b = m 2^e, m in [sqrt(1/2), sqrt(2));
    # the large part s*e is split exactly (fma) into an integer n and a small rest, so the rounding
    # of s*log2(b) does not grow with |s*log2(b)|.
    bits = b.to(tl.int32, bitcast=True)
    e = ((bits >> 23) & 0xFF) - 127
    m = ((bits & 0x7FFFFF) | 0x3F800000).to(tl.float32, bitcast=True)
    big = m > 1.4142135623730951
    m = tl.where(big, m * 0.5, m)
    ef = (e + tl.where(big, 1, 0)).to(tl.float32)
    p_hi = s * ef
    p_lo = tl.fma(s, ef, -p_hi)
    n = tl.floor(0.5 - p_hi)
    g = (-p_hi - n) - p_lo - s * tl.log2(m)
    n1 = tl.floor(n * 0.5)
    return tl.exp2(g) * tl.exp2(n1) * tl.exp2(n - n1)


@triton.jit
def _hurwitz(s, q):
    # zeta(s, q) for s > 1, q > 0: SHIFT direct terms (k+q)^-s, then with a = q + SHIFT
    # a^(1-s)/(s-1) + a^-s/2 + sum_j B2j/(2j)! (s)_(2j-1) a^(-s-2j+1). The running product `pt`
    # holds (s)_(2j-1) a^(-s-2j+1), so no intermediate overflows for large s.
    acc = tl.zeros_like(q)
    for k in tl.static_range(SHIFT):
        acc += _pow_neg(q + k, s)
    a = q + SHIFT
    inv = 1.0 / a
    inv2 = inv * inv
    ap = _pow_neg(a, s)
    tail = ap * a / (s - 1.0) + 0.5 * ap
    pt = s * ap * inv
    tail += B2 * pt
    pt = pt * (s + 1.0) * (s + 2.0) * inv2
    tail += B4 * pt
    pt = pt * (s + 3.0) * (s + 4.0) * inv2
    tail += B6 * pt
    pt = pt * (s + 5.0) * (s + 6.0) * inv2
    tail += B8 * pt
    pt = pt * (s + 7.0) * (s + 8.0) * inv2
    tail += B10 * pt
    pt = pt * (s + 9.0) * (s + 10.0) * inv2
    tail += B12 * pt
    return acc + tail


@triton.jit
def zeta_flat_kernel(x_ptr, q_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    s = tl.load(x_ptr + offsets, mask=mask, other=2.0).to(tl.float32)
    q = tl.load(q_ptr + offsets, mask=mask, other=1.0).to(tl.float32)
    tl.store(y_ptr + offsets, _hurwitz(s, q).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def zeta_broadcast_kernel(x_ptr, q_ptr, y_ptr, n_rows, s1, s2, s3,
                          sx0, sx1, sx2, sx3, sq0, sq1, sq2, sq3,
                          n_col_blocks, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # Output shape (s0, s1, s2, s3), contiguous; operand strides are 0 along broadcast dimensions.
    pid = tl.program_id(0).to(tl.int64)
    rb = pid // n_col_blocks
    cb = pid % n_col_blocks
    rows = rb * BLOCK_R + tl.arange(0, BLOCK_R).to(tl.int64)
    i2 = rows % s2
    r = rows // s2
    i1 = r % s1
    i0 = r // s1
    cols = cb * BLOCK_C + tl.arange(0, BLOCK_C).to(tl.int64)
    mask = (rows < n_rows)[:, None] & (cols < s3)[None, :]
    x_off = (i0 * sx0 + i1 * sx1 + i2 * sx2)[:, None] + (cols * sx3)[None, :]
    q_off = (i0 * sq0 + i1 * sq1 + i2 * sq2)[:, None] + (cols * sq3)[None, :]
    s = tl.load(x_ptr + x_off, mask=mask, other=2.0).to(tl.float32)
    q = tl.load(q_ptr + q_off, mask=mask, other=1.0).to(tl.float32)
    y_off = (rows * s3)[:, None] + cols[None, :]
    tl.store(y_ptr + y_off, _hurwitz(s, q).to(y_ptr.dtype.element_ty), mask=mask)


def zeta(input, other, out=None):
    out_dtype = torch.result_type(input, other)
    device = input.device if isinstance(input, torch.Tensor) else other.device
    # a Python number becomes a 0-dim tensor, broadcast with stride 0 like any size-1 dimension
    x = input if isinstance(input, torch.Tensor) else torch.full((), float(input), dtype=out_dtype, device=device)
    q = other if isinstance(other, torch.Tensor) else torch.full((), float(other), dtype=out_dtype, device=device)
    shape = torch.broadcast_shapes(x.shape, q.shape)
    y = torch.empty(shape, dtype=out_dtype, device=device)
    n = y.numel()
    if n and tuple(x.shape) == tuple(shape) and tuple(q.shape) == tuple(shape) \
            and x.is_contiguous() and q.is_contiguous():
        zeta_flat_kernel[(triton.cdiv(n, 512),)](x, q, y, n, BLOCK=512)
    elif n:
        if len(shape) > MAX_DIMS:
            raise ValueError(f"zeta supports at most {MAX_DIMS} dimensions")
        full = [1] * (MAX_DIMS - len(shape)) + list(shape)
        # leading size-1 dimensions, then expand: stride 0 along every broadcast dimension
        xb = x.reshape([1] * (MAX_DIMS - x.dim()) + list(x.shape)).expand(full)
        qb = q.reshape([1] * (MAX_DIMS - q.dim()) + list(q.shape)).expand(full)
        last = full[-1]
        block_c = max(16, min(512, triton.next_power_of_2(last)))
        block_r = max(1, 2048 // block_c)
        n_rows = n // last
        n_col_blocks = triton.cdiv(last, block_c)
        grid = (triton.cdiv(n_rows, block_r) * n_col_blocks,)
        zeta_broadcast_kernel[grid](xb, qb, y, n_rows, full[1], full[2], full[3], *xb.stride(), *qb.stride(),
                                    n_col_blocks, BLOCK_R=block_r, BLOCK_C=block_c)
    if out is not None:
        out.copy_(y)
        return out
    return y
