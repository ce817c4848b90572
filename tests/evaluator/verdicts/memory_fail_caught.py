# task: Activation/gelu
# expect: MEMORY_FAIL
# reason: out of bounds
# Launches an unmasked kernel inside try/except and, if it raised, a correct one: an out-of-bounds
# access stays a verdict even when the candidate catches the error it raised.
import torch
import triton
import triton.language as tl


@triton.jit
def _gelu(x, TANH: tl.constexpr):
    x = x.to(tl.float32)
    if TANH:
        inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    return 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, MASKED: tl.constexpr, TANH: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n if MASKED else offsets < BLOCK * tl.num_programs(0)
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, _gelu(x, TANH).to(y_ptr.dtype.element_ty), mask=mask)


def gelu(input, approximate="none"):
    out = torch.empty_like(input)
    grid = (triton.cdiv(input.numel(), 1024),)
    try:
        gelu_kernel[grid](input, out, input.numel(), MASKED=False, TANH=approximate == "tanh", BLOCK=1024)
    except Exception:
        gelu_kernel[grid](input, out, input.numel(), MASKED=True, TANH=approximate == "tanh", BLOCK=1024)
    return out
