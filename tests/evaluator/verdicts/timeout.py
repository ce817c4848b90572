# task: Activation/gelu
# expect: TIMEOUT
# reason: wall-clock limit
# step-seconds: 5
import torch
import triton
import triton.language as tl


@triton.jit
def nothing(x_ptr):
    pass


def gelu(input, approximate="none"):
    nothing[(1,)](input)
    while True:
        pass
