import torch
import triton
import triton.language as tl


@triton.jit
def signbit_kernel(bits_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # bits_ptr points at the input reinterpreted as signed integers of the same width:
    # the sign bit is set exactly where that integer is negative.
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    bits = tl.load(bits_ptr + offsets, mask=mask, other=0)
    tl.store(y_ptr + offsets, bits < 0, mask=mask)


def signbit(input, out=None):
    x = input.contiguous()
    int_dtype = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
    bits = x.view(int_dtype)
    y = torch.empty(x.shape, dtype=torch.bool, device=x.device)
    n = x.numel()
    block = 1024
    signbit_kernel[(triton.cdiv(n, block),)](bits, y, n, BLOCK=block)
    if out is not None:
        out.copy_(y)
        return out
    return y
