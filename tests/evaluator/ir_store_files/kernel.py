import triton
import triton.language as tl


@triton.jit
def scaled_exp(x, y, n, B: tl.constexpr):
    offsets = tl.program_id(0) * B + tl.arange(0, B)
    mask = offsets < n
    tl.store(y + offsets, tl.exp(tl.load(x + offsets, mask=mask)) * 2, mask=mask)
