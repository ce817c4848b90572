import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def relu_sqrt_kernel(x_ptr, y_ptr, n, WRITE_BACK: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    r = tl.where((x > 0.0) | (x != x), x, 0.0)  # relu keeps NaN
    if WRITE_BACK:
        tl.store(x_ptr + offsets, r.to(x_ptr.dtype.element_ty), mask=mask)
    y = tl.sqrt(r)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def fused_relu_sqrt(input, inplace=False, out=None):
    x = input.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return y
    write_back = bool(inplace)
    relu_sqrt_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, WRITE_BACK=write_back, BLOCK=BLOCK, num_warps=8)
    if write_back and x is not input:
        input.copy_(x)
    if out is not None:
        out.copy_(y)
        return out
    return y
