# task: Activation/gelu
# expect: MEMORY_FAIL
# reason: out of bounds
# No mask at all: the last block reads and writes up to a block's worth past the tensors' ends.
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
    x = tl.load(x_ptr + offsets)
    tl.store(y_ptr + offsets, _gelu(x, TANH).to(y_ptr.dtype.element_ty))


def gelu(input, approximate="none"):
    out = torch.empty_like(input)
    gelu_kernel[(triton.cdiv(input.numel(), 256),)](input, out, input.numel(), TANH=approximate == "tanh",
                                                    BLOCK=256)
    return out
