import torch
import triton
import triton.language as tl


@triton.jit
def sqrt_tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    r = tl.sqrt(x)  # NaN for x < 0; r >= 0 otherwise
    # r < 0.25: Taylor series of tanh (error below 1e-9 relative); else (1 - e) / (1 + e), e = exp(-2r)
    r2 = r * r
    poly = 62.0 / 2835.0
    poly = poly * r2 - 17.0 / 315.0
    poly = poly * r2 + 2.0 / 15.0
    poly = poly * r2 - 1.0 / 3.0
    near = r + r * r2 * poly
    e = tl.exp(-2.0 * r)
    far = (1.0 - e) / (1.0 + e)
    y = tl.where(r < 0.25, near, far)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def sqrt_tanh(input, out=None):
    x = input.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    block = 1024
    sqrt_tanh_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
    if out is not None:
        out.copy_(y)
        return out
    return y
