import torch
import triton
import triton.language as tl


@triton.jit
def signbit_bitwise_and_kernel(x_ptr, other_ptr, sign_ptr, and_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    o = tl.load(other_ptr + offsets, mask=mask, other=0)
    # the sign bit is the top bit of the same-width integer reinterpretation
    if x_ptr.dtype.element_ty.primitive_bitwidth == 16:
        bits = x.to(tl.int16, bitcast=True)
    elif x_ptr.dtype.element_ty.primitive_bitwidth == 32:
        bits = x.to(tl.int32, bitcast=True)
    else:
        bits = x.to(tl.int64, bitcast=True)
    tl.store(sign_ptr + offsets, bits < 0, mask=mask)
    if other_ptr.dtype.element_ty == tl.int1:
        conv = x.to(tl.float32) != 0.0
    else:
        conv = x.to(other_ptr.dtype.element_ty)
    tl.store(and_ptr + offsets, conv & o, mask=mask)


def signbit_bitwise_and(input: torch.Tensor, other: torch.Tensor):
    x = input.contiguous()
    o = other.contiguous()
    if tuple(x.shape) != tuple(o.shape):
        raise ValueError("input and other must have the same shape")
    sign = torch.empty(x.shape, dtype=torch.bool, device=x.device)
    anded = torch.empty_like(o)
    n = x.numel()
    block = 1024
    signbit_bitwise_and_kernel[(triton.cdiv(n, block),)](x, o, sign, anded, n, BLOCK=block)
    return sign, anded
