# task: Activation/gelu
# expect: MEMORY_FAIL
# reason: out of bounds
# Reads each element's left neighbour, unmasked at the left edge (offset -1), then discards it
# there: the first lane reads before the start of the input.
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
def gelu_kernel(x_ptr, y_ptr, n, TANH: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    left = tl.load(x_ptr + offsets - 1, mask=mask)
    y = tl.where(offsets >= 0, _gelu(x, TANH), _gelu(left, TANH))
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def gelu(input, approximate="none"):
    out = torch.empty_like(input)
    gelu_kernel[(triton.cdiv(input.numel(), 1024),)](input, out, input.numel(), TANH=approximate == "tanh",
                                                     BLOCK=1024)
    return out
