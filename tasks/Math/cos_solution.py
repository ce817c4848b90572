import torch
import triton
import triton.language as tl


@triton.jit
def cos_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(y_ptr + offsets, tl.cos(x).to(y_ptr.dtype.element_ty), mask=mask)


def cos(input_tensor):
    x = input_tensor.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    block = 2048
    cos_kernel[(max(1, triton.cdiv(n, block)),)](x, y, n, BLOCK=block, num_warps=8)
    return y
