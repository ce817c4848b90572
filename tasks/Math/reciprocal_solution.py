import torch
import triton
import triton.language as tl


@triton.jit
def reciprocal_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=1.0).to(tl.float32)
    tl.store(y_ptr + offsets, (1.0 / x).to(y_ptr.dtype.element_ty), mask=mask)


def reciprocal(input, out=None):
    x = input.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    block = 1024
    reciprocal_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
    if out is not None:
        out.copy_(y)
        return out
    return y
