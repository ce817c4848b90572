# task: Activation/gelu
# expect: RUNTIME_FAIL
# reason: into its scratch directory
# disk-limit: 64
# Prints without end: its output file grows until the scratch-directory watchdog stops it.
import torch
import triton
import triton.language as tl


@triton.jit
def nothing(x_ptr):
    pass


def gelu(input, approximate="none"):
    nothing[(1,)](input)
    line = "x" * (1 << 20)
    while True:
        print(line)
