import torch
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    y = tl.where(x < 0.0, 0.0, x)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def relu(input, inplace=False):
    x = input.contiguous()
    y = x if (inplace and x is input) else torch.empty_like(x)
    n = x.numel()
    block = 2048
    relu_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block, num_warps=8)
    if inplace:
        if y is not input:
            input.copy_(y)
        return input
    return y
