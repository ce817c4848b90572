# task: Activation/gelu
# expect: COMPILE_FAIL
# reason: importing the module failed
import torch
import triton
import triton.language as tl

BLOCK = undefined_constant * 2


@triton.jit
def nothing(x_ptr):
    pass


def gelu(input, approximate="none"):
    nothing[(1,)](input)
    return input
