# task: Activation/gelu
# expect: RUNTIME_FAIL
# reason: exceeded the memory limit
# memory-limit: watchdog
# Grows resident memory step by step (no single huge request); the evaluator's watchdog stops it.
import torch
import triton
import triton.language as tl


@triton.jit
def nothing(x_ptr):
    pass


def gelu(input, approximate="none"):
    nothing[(1,)](input)
    hoard = []
    while True:
        hoard.append(torch.ones(1 << 26, dtype=torch.uint8))
