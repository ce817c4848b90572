# task: Activation/gelu
# expect: COMPILE_FAIL
# reason: syntax error
import triton

def gelu(input, approximate="none")
    return input
