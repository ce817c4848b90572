import torch
import triton
import triton.language as tl

SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)
INV_SQRT2 = tl.constexpr(0.7071067811865476)
# |x| <= 5: J1(x) = x (x^2 - j1^2)(x^2 - j2^2) R(x^2), with j1, j2 the first two zeros (Cephes' j1)
Z1 = tl.constexpr(14.681970642123893)
Z2 = tl.constexpr(49.218456321694604)


@triton.jit
def _poly4(z, c0, c1, c2, c3):
    return ((c0 * z + c1) * z + c2) * z + c3


@triton.jit
def bessel_j1_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    ax = tl.abs(x)

    # small arguments: rational approximation with the two zeros factored out
    xs = tl.minimum(ax, 5.0)
    z = xs * xs
    rp = _poly4(z, -8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
                3.68295732863852883286e+15)
    rq = z + 6.20836478118054335476e+02
    rq = rq * z + 2.56987256757748830383e+05
    rq = rq * z + 8.35146791431949253037e+07
    rq = rq * z + 2.21511595479792499675e+10
    rq = rq * z + 4.74914122079991414898e+12
    rq = rq * z + 7.84369607876235854894e+14
    rq = rq * z + 8.95222336184627338078e+16
    rq = rq * z + 5.32278620332680085395e+18
    small = rp / rq * xs * (z - Z1) * (z - Z2)

    # large arguments: J1 = sqrt(2 / (pi x)) (P cos(x - 3pi/4) - (5/x) Q sin(x - 3pi/4)), with P and Q
    # rational in (5/x)^2. cos and sin of x - 3pi/4 are formed from cos x and sin x, which keeps the
    # phase exact however large x is.
    xl = tl.maximum(ax, 5.0)
    w = 5.0 / xl
    q = w * w
    pp = ((((((7.62125616208173112003e-04 * q + 7.31397056940917570436e-02) * q + 1.12719608129684925192e+00) * q
              + 5.11207951146807644818e+00) * q + 8.42404590141772420927e+00) * q + 5.21451598682361504063e+00)
          * q + 1.00000000000000000254e+00)
    pq = ((((((5.71323128072548699714e-04 * q + 6.88455908754495404082e-02) * q + 1.10514232634061696926e+00) * q
              + 5.07386386128601488557e+00) * q + 8.39985554327604159757e+00) * q + 5.20982848682361821619e+00)
          * q + 9.99999999999999997461e-01)
    qp = (((((((5.10862594750176621635e-02 * q + 4.98213872951233449420e+00) * q + 7.58238284132545283818e+01) * q
               + 3.66779609360150777800e+02) * q + 7.10856304998926107277e+02) * q + 5.97489612400613639965e+02)
           * q + 2.11688757100572135698e+02) * q + 2.52070205858023719784e+01)
    qq = ((((((q + 7.42373277035675149943e+01) * q + 1.05644886038262816351e+03) * q + 4.98641058337653607651e+03)
            * q + 9.56231892404756170795e+03) * q + 7.99704160447350683650e+03) * q + 2.82619278517639096600e+03)
    qq = qq * q + 3.36093607810698293419e+02
    c = tl.cos(xl)
    s = tl.sin(xl)
    cos_shift = (s - c) * INV_SQRT2    # cos(x - 3pi/4)
    sin_shift = -(s + c) * INV_SQRT2   # sin(x - 3pi/4)
    large = (pp / pq * cos_shift - w * (qp / qq) * sin_shift) * SQRT_2_OVER_PI / tl.sqrt(xl)

    y = tl.where(ax <= 5.0, small, large)
    y = tl.where(x < 0, -y, y)
    y = tl.where(x != x, x, y)  # NaN stays NaN (the clamps above would hide it)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def bessel_j1(input, out=None):
    x = input.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    block = 1024
    bessel_j1_kernel[(max(1, triton.cdiv(n, block)),)](x, y, n, BLOCK=block, num_warps=4)
    if out is not None:
        out.copy_(y)
        return out
    return y
