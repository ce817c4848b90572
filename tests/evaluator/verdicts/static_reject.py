# task: Activation/gelu
# expect: STATIC_REJECT
# reason: `torch.erf` is not on torch's list
import torch
import triton
import triton.language as tl


@triton.jit
def nothing(x_ptr):
    pass


def gelu(input, approximate="none"):
    nothing[(1,)](input)
    return 0.5 * input * (1 + torch.erf(input * 0.7071067811865476))
