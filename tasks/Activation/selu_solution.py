import torch
import triton
import triton.language as tl

ALPHA = tl.constexpr(1.6732632423543772848170429916717)
SCALE = tl.constexpr(1.0507009873554804934193349852946)


@triton.jit
def selu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    negative = ALPHA * (tl.exp(tl.minimum(x, 0.0)) - 1.0)
    y = SCALE * tl.where(x > 0.0, x, negative)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def selu(input, inplace=False):
    x = input.contiguous()
    y = x if (inplace and x is input) else torch.empty_like(x)
    n = x.numel()
    block = 2048
    selu_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block, num_warps=8)
    if inplace:
        if y is not input:
            input.copy_(y)
        return input
    return y
