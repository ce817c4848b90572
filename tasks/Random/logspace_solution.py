import math

import torch
import triton
import triton.language as tl

BLOCK = 4096


@triton.jit
def logspace_kernel(out_ptr, steps, start, end, step, log2_base, BLOCK: tl.constexpr):
    # The first half of the exponents counts up from start, the second half down from end, so
    # both ends are exact and the index multiplied by the step stays below steps / 2.
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < steps
    half = steps // 2
    up = start + i.to(tl.float32) * step
    down = end - (steps - 1 - i).to(tl.float32) * step
    e = tl.where(i < half, up, down)
    y = tl.exp2(e * log2_base)
    tl.store(out_ptr + i, y.to(out_ptr.dtype.element_ty), mask=mask)


def logspace(start, end, steps, base=10.0, dtype=None, layout=torch.strided, device=None,
             requires_grad=False):
    if steps < 0:
        raise ValueError("steps must be non-negative")
    dtype = dtype if dtype is not None else torch.float32
    result = torch.empty((steps,), device=device, dtype=dtype)
    start = float(start)
    end = float(end) if steps > 1 else start
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    log2_base = math.log2(float(base))
    logspace_kernel[(max(1, triton.cdiv(steps, BLOCK)),)](result, steps, start, end, step, log2_base,
                                                          BLOCK=BLOCK, num_warps=8)
    return result
