# task: Activation/gelu
# expect: RUNTIME_FAIL
# reason: memory
# Asks for far more memory than the candidate's limit.
import torch
import triton
import triton.language as tl


@triton.jit
def nothing(x_ptr):
    pass


def gelu(input, approximate="none"):
    nothing[(1,)](input)
    scratch = torch.ones(1 << 40, dtype=torch.uint8, device=input.device)
    return scratch
