import torch
import triton
import triton.language as tl

PI = tl.constexpr(3.141592653589793)
LOG_PI = tl.constexpr(1.1447298858494002)
HALF_LOG_2PI = tl.constexpr(0.9189385332046727)
# ln Gamma(2 + z) = sum_k C_k z^k for |z| <= 1/2: C_1 = 1 - Euler's gamma, C_k = (-1)^k (zeta(k) - 1) / k
C1 = tl.constexpr(0.42278433509846714)
C2 = tl.constexpr(0.32246703342411322)
C3 = tl.constexpr(-0.067352301053198095)
C4 = tl.constexpr(0.020580808427784548)
C5 = tl.constexpr(-0.0073855510286739853)
C6 = tl.constexpr(0.0028905103307415233)
C7 = tl.constexpr(-0.0011927539117032610)
C8 = tl.constexpr(0.00050966952474304242)
C9 = tl.constexpr(-0.00022315475845357938)
C10 = tl.constexpr(0.000099457512781808534)
C11 = tl.constexpr(-0.000044926236738133142)
C12 = tl.constexpr(0.000020507212775670692)
C13 = tl.constexpr(-0.0000094394882752683959)


@triton.jit
def _lgamma_positive(x):
    # x > 0 (x == 0 gives +inf). Below 7: shift to y = x - k in [1.5, 2.5) and use the Taylor series
    # of ln Gamma around 2 (z = y - 2 is exact), correcting by the logarithm of the skipped factors.
    # From 7 on: Stirling's series.
    k = tl.minimum(tl.maximum(tl.floor(x - 1.5), -2.0), 5.0)
    z = x - (k + 2.0)
    s = C13
    s = s * z + C12
    s = s * z + C11
    s = s * z + C10
    s = s * z + C9
    s = s * z + C8
    s = s * z + C7
    s = s * z + C6
    s = s * z + C5
    s = s * z + C4
    s = s * z + C3
    s = s * z + C2
    s = s * z + C1
    s = s * z
    up = tl.where(k >= 1.0, x - 1.0, 1.0)
    up *= tl.where(k >= 2.0, x - 2.0, 1.0)
    up *= tl.where(k >= 3.0, x - 3.0, 1.0)
    up *= tl.where(k >= 4.0, x - 4.0, 1.0)
    up *= tl.where(k >= 5.0, x - 5.0, 1.0)
    down = tl.where(k <= -1.0, x, 1.0) * tl.where(k <= -2.0, x + 1.0, 1.0)
    small = s + tl.log(up) - tl.log(down)
    xs = tl.maximum(x, 7.0)
    w = 1.0 / xs
    w2 = w * w
    corr = w * (0.083333333333333333 - w2 * (0.0027777777777777778 - w2 * (0.00079365079365079365
                                                                           - w2 * 0.00059523809523809524)))
    # (x - 1/2) ln x - x written so that it overflows only where the result does
    large = (xs - 0.5) * (tl.log(xs) - 1.0) + corr + (HALF_LOG_2PI - 0.5)
    return tl.where(x < 7.0, small, large)


@triton.jit
def gammaln_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    neg = x < 0.0
    # reflection for x < 0: ln|Gamma(x)| = ln(pi / |sin(pi x)|) - ln Gamma(1 - x)
    lg = _lgamma_positive(tl.where(neg, 1.0 - x, x))
    r = x - tl.floor(x + 0.5)  # distance to the nearest integer, exact
    reflected = (-tl.log(tl.abs(tl.sin(r * PI))) - lg) + LOG_PI
    pole = neg & (x == tl.floor(x))
    y = tl.where(neg, tl.where(pole, float("inf"), reflected), lg)
    y = tl.where(x != x, x, y)  # NaN stays NaN (the clamps in _lgamma_positive would hide it)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def gammaln(input, out=None):
    x = input.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    block = 1024
    gammaln_kernel[(max(1, triton.cdiv(n, block)),)](x, y, n, BLOCK=block, num_warps=4)
    if out is not None:
        out.copy_(y)
        return out
    return y
