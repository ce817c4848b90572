import torch
import triton
import triton.language as tl


@triton.jit
def trunc_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    y = tl.where(x < 0.0, tl.ceil(x), tl.floor(x))
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def trunc(input, out=None):
    x = input.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    block = 1024
    trunc_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
    if out is not None:
        out.copy_(y)
        return out
    return y
