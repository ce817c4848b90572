# task: Activation/gelu
# expect: RUNTIME_FAIL
# reason: killed by SIGSEGV
# static: off
# The process dies mid-call (as a wild pointer in a kernel would make it).
import os
import signal

import triton
import triton.language as tl


@triton.jit
def nothing(x_ptr):
    pass


def gelu(input, approximate="none"):
    nothing[(1,)](input)
    os.kill(os.getpid(), signal.SIGSEGV)
