# task: Activation/gelu
# expect: CONTRACT_FAIL
# reason: MiB of output where
# gpu: no
# Returns a 256 MiB tensor for a tiny input: the evaluator refuses to load it (no copy onto the
# GPU, no comparison), whatever its shape claims. Not on a GPU, whose first case is the standard
# size, where 256 MiB is what is expected.
import torch
import triton
import triton.language as tl


@triton.jit
def fill(y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros((BLOCK,), tl.float32))


def gelu(input, approximate="none"):
    out = torch.empty(64 << 20, dtype=torch.float32, device=input.device)
    fill[(1,)](out, BLOCK=1024)
    return out
