import torch
import triton
import triton.language as tl


@triton.jit
def tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    a = tl.abs(x)
    # small |x|: odd Taylor series (no cancellation); otherwise (1 - e) / (1 + e) with e = exp(-2|x|) <= 1
    x2 = a * a
    series = a * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0))))
    e = tl.exp(-2.0 * a)
    t = tl.where(a < 0.0625, series, (1.0 - e) / (1.0 + e))
    y = tl.where(x < 0.0, -t, t)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def tanh(input_tensor, out_tensor=None):
    x = input_tensor.contiguous()
    direct = (out_tensor is not None and out_tensor.is_contiguous() and out_tensor.dtype == x.dtype
              and out_tensor.shape == x.shape)
    y = out_tensor if direct else torch.empty_like(x)
    n = x.numel()
    block = 2048
    tanh_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block, num_warps=8)
    if out_tensor is not None and not direct:
        out_tensor.copy_(y)
        return out_tensor
    return y
