import torch
import triton
import triton.language as tl

# pi and pi/2 as float32 head + tail
PI_HI = tl.constexpr(3.1415927410125732)
PI_LO = tl.constexpr(-8.742278012618954e-08)
HALF_PI_HI = tl.constexpr(1.5707963705062866)
HALF_PI_LO = tl.constexpr(-4.371139006309477e-08)


@triton.jit
def _asin_small(s):
    # asin(s) for |s| <= 1/2: s + s^3 P(s^2) (Cephes' asinf polynomial, about 1 ulp)
    z = s * s
    p = 4.2163199048e-2
    p = p * z + 2.4181311049e-2
    p = p * z + 4.5470025998e-2
    p = p * z + 7.4953002686e-2
    p = p * z + 1.6666752422e-1
    return s + s * z * p


@triton.jit
def _acos_parts(x):
    # arccos(x) for |x| < 1 as an unevaluated float32 sum hi + lo
    a = tl.abs(x)
    s = tl.sqrt_rn(0.5 * (1.0 - a))
    r = 2.0 * _asin_small(s)                     # arccos(|x|) for |x| > 1/2
    m = _asin_small(x)                           # asin(x) for |x| <= 1/2
    mid_hi = HALF_PI_HI - m
    mid_lo = ((HALF_PI_HI - mid_hi) - m) + HALF_PI_LO
    neg_hi = PI_HI - r
    neg_lo = ((PI_HI - neg_hi) - r) + PI_LO
    hi = tl.where(a <= 0.5, mid_hi, tl.where(x > 0, r, neg_hi))
    lo = tl.where(a <= 0.5, mid_lo, tl.where(x > 0, 0.0, neg_lo))
    return hi, lo


@triton.jit
def chebyshev_t_kernel(x_ptr, n_ptr, out_ptr, n_value, M, N, D1, D2,
                       sx0, sx1, sx2, sx3, sn0, sn1, sn2, sn3,
                       N_SCALAR: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # The output is viewed as M = D0 * D1 * D2 rows of N elements; x and n have their own strides
    # (0 along broadcast dimensions).
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    i2 = rows % D2
    rest = rows // D2
    i1 = rest % D1
    i0 = rest // D1
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    x_off = (i0 * sx0 + i1 * sx1 + i2 * sx2)[:, None] + (cols * sx3)[None, :]
    x = tl.load(x_ptr + x_off, mask=mask, other=0.0).to(tl.float32)
    if N_SCALAR:
        n = tl.zeros(x.shape, tl.int64) + n_value
    else:
        n_off = (i0 * sn0 + i1 * sn1 + i2 * sn2)[:, None] + (cols * sn3)[None, :]
        n = tl.load(n_ptr + n_off, mask=mask, other=0).to(tl.int64)
    ax = tl.abs(x)
    nf = n.to(tl.float32)

    # |x| < 1 and n > 6: cos(n arccos x), with the product n * arccos(x) kept exact to first order
    th_hi, th_lo = _acos_parts(tl.minimum(tl.maximum(x, -0.99999994), 0.99999994))
    p = nf * th_hi
    e = tl.fma(nf, th_hi, -p) + nf * th_lo
    trig = tl.cos(p) - tl.sin(p) * e
    use_trig = (n > 6) & (ax < 1.0)

    # otherwise the three-term recurrence, run up to the largest degree that needs it in this tile
    need = mask & (n >= 2) & (~use_trig)
    steps = tl.max(tl.where(need, n, 1))
    prev = tl.full(x.shape, 1.0, tl.float32)
    cur = x
    for k in range(2, steps + 1):
        nxt = (x + x) * cur - prev
        go = k <= n
        prev = tl.where(go, cur, prev)
        cur = tl.where(go, nxt, cur)

    y = tl.where(n == 0, 1.0, cur)
    y = tl.where(use_trig, trig, y)
    odd = (n % 2) == 1
    y = tl.where(ax == 1.0, tl.where((x < 0) & odd, -1.0, 1.0), y)
    y = tl.where(n < 0, 0.0, y)
    out_off = rows[:, None] * N + cols[None, :]
    tl.store(out_ptr + out_off, y.to(out_ptr.dtype.element_ty), mask=mask)


def _collapse(shape, strides_list):
    """Drop size-1 dimensions and merge neighbours that are contiguous in every operand."""
    dims = [(s, [st[d] for st in strides_list]) for d, s in enumerate(shape) if s != 1]
    merged = []
    for size, strides in dims:
        if merged and all(prev == cur * size for prev, cur in zip(merged[-1][1], strides)):
            merged[-1] = (merged[-1][0] * size, strides)
        else:
            merged.append((size, strides))
    return merged or [(1, [0] * len(strides_list))]


def chebyshev_polynomial_t(input, n, out=None):
    scalar = not isinstance(n, torch.Tensor)
    shape = tuple(input.shape) if scalar else tuple(torch.broadcast_shapes(input.shape, n.shape))
    dtype = input.dtype  # integer degrees never widen the floating result
    x = input.expand(shape)
    nt = x if scalar else n.expand(shape)
    result = torch.empty(shape, device=input.device, dtype=dtype)
    dims = _collapse(shape, [x.stride(), nt.stride()])
    if len(dims) > 4:
        x = x.contiguous()
        nt = x if scalar else nt.contiguous()
        dims = _collapse(shape, [x.stride(), nt.stride()])
    dims = [(1, [0, 0])] * (4 - len(dims)) + dims
    sizes = [d[0] for d in dims]
    sx = [d[1][0] for d in dims]
    sn = [d[1][1] for d in dims]
    cols = sizes[3]
    rows = sizes[0] * sizes[1] * sizes[2]
    block_n = min(1024, triton.next_power_of_2(cols))
    block_m = min(triton.next_power_of_2(rows), max(1, 2048 // block_n))
    grid = (triton.cdiv(rows, block_m), triton.cdiv(cols, block_n))
    chebyshev_t_kernel[grid](x, nt, result, int(n) if scalar else 0, rows, cols, sizes[1], sizes[2],
                             sx[0], sx[1], sx[2], sx[3], sn[0], sn[1], sn[2], sn[3],
                             N_SCALAR=scalar, BLOCK_M=block_m, BLOCK_N=block_n, num_warps=8)
    if out is not None:
        out.copy_(result)
        return out
    return result
