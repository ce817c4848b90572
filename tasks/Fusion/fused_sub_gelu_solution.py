import torch
import triton
import triton.language as tl

BLOCK = 2048
SQRT_HALF = tl.constexpr(0.7071067811865476)
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)


@triton.jit
def sub_gelu_kernel(x_ptr, o_ptr, y_ptr, n, other_value, alpha,
                    size1, size2, size3, ostride0, ostride1, ostride2, ostride3,
                    OTHER_MODE: tl.constexpr, TANH: tl.constexpr, BLOCK: tl.constexpr):
    # OTHER_MODE 0: `other` is a scalar; 1: a tensor of the input's (contiguous) shape; 2: a broadcast
    # tensor read through its strides over the input's shape padded to 4 dims (stride 0 where broadcast).
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    if OTHER_MODE == 0:
        o = other_value
    elif OTHER_MODE == 1:
        o = tl.load(o_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    else:
        i3 = offsets % size3
        rest = offsets // size3
        i2 = rest % size2
        rest = rest // size2
        i1 = rest % size1
        i0 = rest // size1
        o_offs = i0 * ostride0 + i1 * ostride1 + i2 * ostride2 + i3 * ostride3
        o = tl.load(o_ptr + o_offs, mask=mask, other=0.0).to(tl.float32)
    d = x - alpha * o
    if TANH:
        inner = SQRT_2_OVER_PI * (d + 0.044715 * d * d * d)
        y = 0.5 * d * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    else:
        y = 0.5 * d * (1.0 + tl.erf(d * SQRT_HALF))
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def fused_sub_gelu(input, other, alpha=1, approximate="none", out=None):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    x = input.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return y
    sizes = [1] * (4 - x.dim()) + list(x.shape)
    strides = [0, 0, 0, 0]
    if isinstance(other, torch.Tensor):
        if other.dim() > x.dim() or x.dim() > 4:
            raise ValueError("`other` must broadcast to the input's shape (at most 4 dims)")
        if tuple(other.shape) == tuple(x.shape):
            o, mode = other.contiguous(), 1
        else:
            o, mode = other.expand(x.shape), 2
            strides = [0] * (4 - o.dim()) + [o.stride(d) for d in range(o.dim())]
        value = 0.0
    else:
        o, mode, value = x, 0, float(other)
    grid = (triton.cdiv(n, BLOCK),)
    sub_gelu_kernel[grid](x, o, y, n, value, float(alpha), sizes[1], sizes[2], sizes[3],
                          strides[0], strides[1], strides[2], strides[3],
                          OTHER_MODE=mode, TANH=approximate == "tanh", BLOCK=BLOCK, num_warps=8)
    if out is not None:
        out.copy_(y)
        return out
    return y
