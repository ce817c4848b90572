# task: Activation/gelu
# expect: INCORRECT
# reason: outside tolerance
# The tanh approximation where the exact form is asked for: close, but not within float32 accuracy.
import torch
import triton
import triton.language as tl


@triton.jit
def gelu_tanh(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    y = 0.5 * x * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def gelu(input, approximate="none"):
    out = torch.empty_like(input)
    gelu_tanh[(triton.cdiv(input.numel(), 1024),)](input, out, input.numel(), BLOCK=1024)
    return out
