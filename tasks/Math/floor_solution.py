import torch
import triton
import triton.language as tl


@triton.jit
def floor_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(y_ptr + offsets, tl.floor(x).to(y_ptr.dtype.element_ty), mask=mask)


def floor(input, out=None):
    x = input.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    block = 2048
    floor_kernel[(max(1, triton.cdiv(n, block)),)](x, y, n, BLOCK=block, num_warps=8)
    if out is not None:
        out.copy_(y)
        return out
    return y
