import torch
import triton
import triton.language as tl

DEG_PER_RAD = tl.constexpr(57.29577951308232)


@triton.jit
def rad2deg_sqrt_kernel(x_ptr, deg_ptr, root_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(deg_ptr + offsets, (x * DEG_PER_RAD).to(deg_ptr.dtype.element_ty), mask=mask)
    tl.store(root_ptr + offsets, tl.sqrt(x).to(root_ptr.dtype.element_ty), mask=mask)


def rad2deg_sqrt(input: torch.Tensor):
    x = input.contiguous()
    deg = torch.empty_like(x)
    root = torch.empty_like(x)
    n = x.numel()
    block = 1024
    rad2deg_sqrt_kernel[(triton.cdiv(n, block),)](x, deg, root, n, BLOCK=block)
    return deg, root
