import torch
import triton
import triton.language as tl


@triton.jit
def log1p_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    # Near zero: log1p(x) = 2 atanh(s) with s = x / (2 + x), |s| <= 0.18 on [-0.3, 0.44],
    # summed as an odd series; elsewhere 1 + x is far enough from 1 for log to be accurate.
    small = (x > -0.3) & (x < 0.44)
    xs = tl.where(small, x, 0.0)
    s = xs / (2.0 + xs)
    s2 = s * s
    poly = 1.0 / 15.0
    poly = poly * s2 + 1.0 / 13.0
    poly = poly * s2 + 1.0 / 11.0
    poly = poly * s2 + 1.0 / 9.0
    poly = poly * s2 + 1.0 / 7.0
    poly = poly * s2 + 1.0 / 5.0
    poly = poly * s2 + 1.0 / 3.0
    near = 2.0 * s + 2.0 * s * s2 * poly
    far = tl.log(1.0 + x)
    y = tl.where(small, near, far)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def log1p(input, out=None):
    x = input.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    block = 1024
    log1p_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
    if out is not None:
        out.copy_(y)
        return out
    return y
