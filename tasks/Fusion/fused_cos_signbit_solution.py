import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def cos_signbit_kernel(x_ptr, c_ptr, s_ptr, n, WIDTH: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    c = tl.cos(x).to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + offs, c, mask=mask)
    # the sign bit of the stored value: reinterpret it as a signed integer of the same width
    if WIDTH == 2:
        negative = c.to(tl.int16, bitcast=True) < 0
    elif WIDTH == 8:
        negative = c.to(tl.int64, bitcast=True) < 0
    else:
        negative = c.to(tl.int32, bitcast=True) < 0
    tl.store(s_ptr + offs, negative.to(tl.int8), mask=mask)


def fused_cos_signbit(input: torch.Tensor):
    x = input.contiguous()
    c = torch.empty_like(x)
    s = torch.empty(x.shape, dtype=torch.bool, device=x.device)
    n = x.numel()
    if n > 0:
        cos_signbit_kernel[(triton.cdiv(n, BLOCK),)](x, c, s.view(torch.int8), n, WIDTH=x.element_size(),
                                                     BLOCK=BLOCK, num_warps=8)
    return c, s
