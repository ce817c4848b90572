import torch
import triton
import triton.language as tl


@triton.jit
def logit_kernel(x_ptr, y_ptr, n, eps, CLAMP: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    p = tl.load(x_ptr + offsets, mask=mask, other=0.5).to(tl.float32)
    if CLAMP:
        lo = eps
        hi = 1.0 - eps
        # NaN compares false both ways, so it passes through unchanged
        p = tl.where(p < lo, lo, p)
        p = tl.where(p > hi, hi, p)
    y = tl.log(p / (1.0 - p))
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def logit(input, eps=None, out=None):
    x = input.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    block = 1024
    clamp = eps is not None
    logit_kernel[(triton.cdiv(n, block),)](x, y, n, float(eps) if clamp else 0.0, CLAMP=clamp, BLOCK=block)
    if out is not None:
        out.copy_(y)
        return out
    return y
