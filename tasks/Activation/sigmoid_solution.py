import torch
import triton
import triton.language as tl


@triton.jit
def sigmoid_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    # exp of a non-positive number never overflows; mirror it for positive x
    e = tl.exp(-tl.abs(x))
    y = tl.where(x >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def sigmoid(input, out=None):
    x = input.contiguous()
    direct = out is not None and out.is_contiguous() and out.dtype == x.dtype and out.shape == x.shape
    y = out if direct else torch.empty_like(x)
    n = x.numel()
    block = 2048
    sigmoid_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block, num_warps=8)
    if out is not None and not direct:
        out.copy_(y)
        return out
    return y
