import torch
import triton
import triton.language as tl


@triton.jit
def cos_avg_pool1d_kernel(x_ptr, y_ptr, R, L, L_out, stride, padding, num_pid_o,
                          K: tl.constexpr, COUNT_PAD: tl.constexpr,
                          BLOCK_R: tl.constexpr, BLOCK_O: tl.constexpr):
    pid = tl.program_id(0)
    pid_o = pid % num_pid_o
    pid_r = pid // num_pid_o
    rows = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    outs = pid_o * BLOCK_O + tl.arange(0, BLOCK_O)
    mask_r = rows < R
    mask_o = outs < L_out
    x_row = rows.to(tl.int64) * L
    start = outs * stride - padding
    acc = tl.zeros((BLOCK_R, BLOCK_O), dtype=tl.float32)
    for j in range(0, K):
        pos = start + j
        m = mask_r[:, None] & (mask_o & (pos >= 0) & (pos < L))[None, :]
        v = tl.load(x_ptr + x_row[:, None] + pos[None, :], mask=m, other=0.0).to(tl.float32)
        acc += tl.where(m, tl.cos(v), 0.0)   # padding contributes zeros, not cos(0)
    end = tl.minimum(start + K, L + padding)
    if COUNT_PAD:
        count = end - start
    else:
        count = tl.minimum(end, L) - tl.maximum(start, 0)
    y = acc / tl.maximum(count, 1).to(tl.float32)[None, :]
    y_ptrs = y_ptr + rows.to(tl.int64)[:, None] * L_out + outs[None, :]
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=mask_r[:, None] & mask_o[None, :])


def _single(v):
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise ValueError("expected a single kernel_size/stride/padding value")
        return int(v[0])
    return int(v)


def fused_cos_avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    k = _single(kernel_size)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else _single(stride)
    p = _single(padding)
    if k <= 0 or s <= 0 or p < 0 or p > k // 2:
        raise ValueError("invalid kernel_size/stride/padding")
    x = input.contiguous()
    L = x.shape[-1]
    span = L + 2 * p - k
    L_out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (L_out - 1) * s >= L + p:
        L_out -= 1
    if L_out <= 0:
        raise ValueError("output length would be non-positive")
    y = torch.empty(tuple(x.shape[:-1]) + (L_out,), dtype=x.dtype, device=x.device)
    R = x.numel() // L if L > 0 else 0
    if R == 0:
        return y
    BLOCK_O = min(triton.next_power_of_2(L_out), 1024)
    BLOCK_R = min(max(1, 2048 // BLOCK_O), triton.next_power_of_2(R))
    num_pid_o = triton.cdiv(L_out, BLOCK_O)
    grid = (triton.cdiv(R, BLOCK_R) * num_pid_o,)
    cos_avg_pool1d_kernel[grid](x, y, R, L, L_out, s, p, num_pid_o, K=k, COUNT_PAD=bool(count_include_pad),
                                BLOCK_R=BLOCK_R, BLOCK_O=BLOCK_O, num_warps=4)
    return y
