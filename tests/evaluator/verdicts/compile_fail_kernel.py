# task: Activation/gelu
# expect: COMPILE_FAIL
# reason: arange's range must be a power of 2
import torch
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n):
    offsets = tl.program_id(0) * 1000 + tl.arange(0, 1000)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, x, mask=mask)


def gelu(input, approximate="none"):
    out = torch.empty_like(input)
    gelu_kernel[(triton.cdiv(input.numel(), 1000),)](input, out, input.numel())
    return out
