# task: Activation/gelu
# style: kernel_function entry, tl.constexpr module constants from math., constexpr mode flag, __main__ self-test
import math

import torch
import triton
import triton.language as tl

INV_SQRT2 = tl.constexpr(1.0 / math.sqrt(2.0))
SQRT_2_OVER_PI = tl.constexpr(math.sqrt(2.0 / math.pi))
GELU_COEF = tl.constexpr(0.044715)


@triton.jit
def gelu_fwd_kernel(x_ptr, y_ptr, n_elements, USE_TANH: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    if USE_TANH:
        inner = SQRT_2_OVER_PI * (x + GELU_COEF * x * x * x)
        # 0.5 * (1 + tanh(u)) == sigmoid(2u); this form cannot overflow into NaN
        y = x / (1.0 + tl.exp(-2.0 * inner))
    else:
        y = 0.5 * x * (1.0 + tl.erf(x * INV_SQRT2))
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def kernel_function(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    x = input if input.is_contiguous() else input.contiguous()
    y = torch.empty_like(x)
    n_elements = x.numel()
    BLOCK_SIZE = 1024
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    gelu_fwd_kernel[grid](x, y, n_elements, USE_TANH=(approximate == "tanh"), BLOCK_SIZE=BLOCK_SIZE)
    return y


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    x = torch.randn(33, 257, device=device) * 2.0
    for mode in ("none", "tanh"):
        ref = torch.nn.functional.gelu(x, approximate=mode)
        out = kernel_function(x, approximate=mode)
        err = (out - ref).abs().max().item()
        print(f"approximate={mode}: max abs err {err:.3e}")
        assert torch.allclose(out, ref, atol=1e-5, rtol=1e-5)
    xh = x.half()
    print("fp16:", torch.allclose(kernel_function(xh), torch.nn.functional.gelu(xh), atol=2e-3, rtol=2e-3))
