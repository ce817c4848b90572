import torch
import triton
import triton.language as tl

SQRT_HALF = tl.constexpr(0.7071067811865476)
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)
BLOCK = 2048
SCAN_BLOCK = 1024


@triton.jit
def count_kernel(m_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = tl.load(m_ptr + offs, mask=offs < n, other=0).to(tl.int32)
    tl.store(counts_ptr + tl.program_id(0), tl.sum(m, axis=0))


@triton.jit
def scan_kernel(counts_ptr, starts_ptr, num_blocks, SCAN_BLOCK: tl.constexpr):
    # One program: exclusive prefix sum of the per-block counts; starts[num_blocks] is the total.
    carry = tl.zeros((), dtype=tl.int64)
    idx = tl.arange(0, SCAN_BLOCK)
    for b0 in range(0, num_blocks, SCAN_BLOCK):
        ok = b0 + idx < num_blocks
        c = tl.load(counts_ptr + b0 + idx, mask=ok, other=0).to(tl.int64)
        inclusive = tl.cumsum(c, axis=0)
        tl.store(starts_ptr + b0 + idx, carry + inclusive - c, mask=ok)
        carry += tl.sum(c, axis=0)
    tl.store(starts_ptr + num_blocks, carry)


@triton.jit
def select_add_gelu_kernel(x_ptr, m_ptr, o_ptr, starts_ptr, y_ptr, n, alpha, o_scalar, o_stride,
                           O_TENSOR: tl.constexpr, TANH: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inb = offs < n
    m = tl.load(m_ptr + offs, mask=inb, other=0).to(tl.int32)
    keep = m != 0
    # destination = elements selected by earlier blocks + selected elements before this one in the block
    dest = tl.load(starts_ptr + pid) + (tl.cumsum(m, axis=0) - m).to(tl.int64)
    x = tl.load(x_ptr + offs, mask=keep, other=0.0).to(tl.float32)
    if O_TENSOR:
        o = tl.load(o_ptr + dest * o_stride, mask=keep, other=0.0).to(tl.float32)
    else:
        o = o_scalar
    s = x + alpha * o
    if TANH:
        inner = SQRT_2_OVER_PI * (s + 0.044715 * s * s * s)
        y = 0.5 * s * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    else:
        y = 0.5 * s * (1.0 + tl.erf(s * SQRT_HALF))
    tl.store(y_ptr + dest, y.to(y_ptr.dtype.element_ty), mask=keep)


def _broadcast(a, b):
    a, b = list(a), list(b)
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            raise ValueError("input and mask do not broadcast together")
        out.append(max(x, y))
    return tuple(out)


def fused_masked_select_add_gelu(input, mask, other, *, alpha=1, approximate="none", out=None):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    shape = _broadcast(input.shape, mask.shape)
    x = input if tuple(input.shape) == shape else input.expand(shape)
    m = mask if tuple(mask.shape) == shape else mask.expand(shape)
    x = x.contiguous()
    m = m.contiguous()
    n = x.numel()
    num_blocks = triton.cdiv(n, BLOCK)
    counts = torch.empty((max(num_blocks, 1),), dtype=torch.int32, device=x.device)
    starts = torch.empty((num_blocks + 1,), dtype=torch.int64, device=x.device)
    if num_blocks > 0:
        count_kernel[(num_blocks,)](m, counts, n, BLOCK=BLOCK, num_warps=4)
    scan_kernel[(1,)](counts, starts, num_blocks, SCAN_BLOCK=SCAN_BLOCK, num_warps=4)
    total = int(starts[num_blocks].item())
    y = torch.empty((total,), dtype=input.dtype, device=input.device)
    is_tensor = isinstance(other, torch.Tensor)
    o, o_stride, o_scalar = y, 0, 0.0
    if is_tensor:
        o = other.reshape(1) if other.dim() == 0 else other
        if o.dim() != 1 or o.shape[0] not in (1, total):
            raise ValueError("other must broadcast to the selected elements' shape")
        o_stride = o.stride(0) if o.shape[0] == total and total > 1 else 0
    else:
        o_scalar = float(other)
    if total > 0:
        select_add_gelu_kernel[(num_blocks,)](
            x, m, o, starts, y, n, float(alpha), o_scalar, o_stride,
            O_TENSOR=is_tensor, TANH=approximate == "tanh", BLOCK=BLOCK, num_warps=8)
    if out is not None:
        out.copy_(y)
        return out
    return y
