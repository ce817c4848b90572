# task: Activation/relu
# expect: CORRECT
# reason: cases passed
# Autotuned with several configs: on the CPU interpreter, which cannot time them, one runs.
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=2), triton.Config({"BLOCK": 128}, num_warps=4)],
                 key=["n"])
@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m).to(tl.float32)
    tl.store(y_ptr + offs, tl.where(x > 0, x, 0.0).to(y_ptr.dtype.element_ty), mask=m)


def relu(input, inplace=False):
    x = input.contiguous()
    y = x if inplace else torch.empty_like(x)
    n = x.numel()
    relu_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
    if inplace and x is not input:
        input.copy_(y)
        return input
    return y
