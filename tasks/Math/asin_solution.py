import torch
import triton
import triton.language as tl

HALF_PI = tl.constexpr(1.5707963267948966)


@triton.jit
def asin_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    a = tl.abs(x)
    # |x| <= 1/2: asin(a) = a + a^3 P(a^2); above: asin(a) = pi/2 - 2 asin(sqrt((1 - a) / 2)).
    # Outside [-1, 1] the square root of a negative number gives NaN, as asin does.
    big = a > 0.5
    z_big = 0.5 * (1.0 - a)
    s = tl.where(big, tl.sqrt_rn(z_big), a)
    z = tl.where(big, z_big, a * a)
    p = 4.2163199048e-2
    p = p * z + 2.4181311049e-2
    p = p * z + 4.5470025998e-2
    p = p * z + 7.4953002686e-2
    p = p * z + 1.6666752422e-1
    r = s + s * z * p
    r = tl.where(big, -2.0 * r + HALF_PI, r)
    y = tl.where(x < 0, -r, r)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def asin(input_tensor):
    x = input_tensor.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    block = 2048
    asin_kernel[(max(1, triton.cdiv(n, block)),)](x, y, n, BLOCK=block, num_warps=8)
    return y
