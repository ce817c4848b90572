# task: Activation/gelu
# expect: RUNTIME_FAIL
# reason: raised ValueError: unsupported layout
import torch
import triton
import triton.language as tl


@triton.jit
def nothing(x_ptr):
    pass


def gelu(input, approximate="none"):
    if input.dim() == 2:
        raise ValueError("unsupported layout")
    nothing[(1,)](input)
    return input
