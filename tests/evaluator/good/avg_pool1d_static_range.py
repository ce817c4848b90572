# task: Pooling/avg_pool1d
# style: tl.static_range unrolled window (constexpr kernel size), kernel_function entry, 2-D grid, helper for int-or-tuple args
import torch
import triton
import triton.language as tl


@triton.jit
def avg_pool1d_kernel(
    x_ptr, y_ptr, L, L_out, stride, padding,
    KSIZE: tl.constexpr, BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)       # one (n, c) pair
    j = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    out_mask = j < L_out
    start = j * stride - padding
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in tl.static_range(KSIZE):
        pos = start + k
        valid = out_mask & (pos >= 0) & (pos < L)
        acc += tl.load(x_ptr + row * L + pos, mask=valid, other=0.0).to(tl.float32)
    # count_include_pad=True: always divide by the full window
    y = acc / KSIZE
    tl.store(y_ptr + row * L_out + j, y.to(y_ptr.dtype.element_ty), mask=out_mask)


def _as_int(v, name):
    if isinstance(v, (tuple, list)):
        assert len(v) == 1, f"{name} must be an int or a 1-element tuple"
        return int(v[0])
    return int(v)


def kernel_function(input, kernel_size, stride=None, padding=0):
    k = _as_int(kernel_size, "kernel_size")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else _as_int(stride, "stride")
    p = _as_int(padding, "padding")
    assert input.dim() in (2, 3), "expected (C, L) or (N, C, L)"
    assert k > 0 and s > 0 and 0 <= p <= k // 2, "invalid pooling parameters"
    x = input.contiguous()
    L = x.shape[-1]
    rows = x.numel() // L if L else 0
    L_out = (L + 2 * p - k) // s + 1
    assert L_out > 0, "output size is too small"
    y = torch.empty(tuple(x.shape[:-1]) + (L_out,), dtype=x.dtype, device=x.device)
    if rows == 0:
        return y
    BLOCK = min(1024, triton.next_power_of_2(L_out))
    grid = (rows, triton.cdiv(L_out, BLOCK))
    avg_pool1d_kernel[grid](x, y, L, L_out, s, p, KSIZE=k, BLOCK=BLOCK)
    return y
