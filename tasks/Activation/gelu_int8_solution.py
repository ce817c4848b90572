import torch
import triton
import triton.language as tl

SQRT_HALF = tl.constexpr(0.7071067811865476)
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)
SCALE = tl.constexpr(0.03125)
INV_SCALE = tl.constexpr(32.0)


@triton.jit
def gelu_int8_kernel(x_ptr, y_ptr, n, TANH: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0).to(tl.float32) * SCALE
    if TANH:
        inner = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
        y = x * tl.sigmoid(2.0 * inner)
    else:
        y = 0.5 * x * (1.0 + tl.erf(x * SQRT_HALF))
    # round half away from zero; the task guarantees no code sits on a tie, so this matches ties-to-even
    v = y * INV_SCALE
    r = tl.where(v >= 0.0, tl.floor(v + 0.5), -tl.floor(0.5 - v))
    r = tl.minimum(tl.maximum(r, -128.0), 127.0)
    tl.store(y_ptr + offsets, r.to(tl.int8), mask=mask)


def gelu_int8(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    if input.dtype != torch.int8:
        raise TypeError(f"gelu_int8 takes torch.int8 tensors, got {input.dtype}")
    x = input.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    block = 4096
    gelu_int8_kernel[(triton.cdiv(n, block),)](x, y, n, TANH=approximate == "tanh", BLOCK=block, num_warps=8)
    return y
