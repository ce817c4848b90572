import torch
import triton
import triton.language as tl

SQRT_HALF = tl.constexpr(0.7071067811865476)
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)


@triton.jit
def gelu_bf16_kernel(x_ptr, y_ptr, n, TANH: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    if TANH:
        inner = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
        # tanh(u) = 2 * sigmoid(2u) - 1
        y = x * tl.sigmoid(2.0 * inner)
    else:
        y = 0.5 * x * (1.0 + tl.erf(x * SQRT_HALF))
    tl.store(y_ptr + offsets, y.to(tl.bfloat16), mask=mask)


def gelu_bf16(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    if input.dtype != torch.bfloat16:
        raise TypeError(f"gelu_bf16 takes torch.bfloat16 tensors, got {input.dtype}")
    x = input.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    block = 2048
    gelu_bf16_kernel[(triton.cdiv(n, block),)](x, y, n, TANH=approximate == "tanh", BLOCK=block, num_warps=8)
    return y
