# task: Activation/gelu
# expect: CONTRACT_FAIL
# reason: without launching any Triton kernel
# Launches on some calls only: the big ones. Small calls are answered without a kernel.
import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


def gelu(input, approximate="none"):
    out = torch.empty_like(input)
    if input.numel() > 10**9:
        scale[(triton.cdiv(input.numel(), 1024),)](input, out, input.numel(), BLOCK=1024)
    return out
