"""The kernels the interpreter probe runs (interpreter_probe.py): one operation each, on one block."""

import triton
import triton.language as tl


@triton.jit
def elementwise(x_ptr, y_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    if OP == 0:
        y = x * 0.5
    elif OP == 1:
        y = x + x
    elif OP == 2:
        y = -x
    elif OP == 3:
        y = tl.maximum(x, 0.0)
    else:
        y = tl.where(x > 0, x, 0.0)
    tl.store(y_ptr + offsets, y, mask=mask)


@triton.jit
def dot(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    rows = tl.arange(0, N)[:, None]
    cols = tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + rows * N + cols)
    b = tl.load(b_ptr + rows * N + cols)
    tl.store(out_ptr + rows * N + cols, tl.dot(a, b))
