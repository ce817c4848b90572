import torch
import triton
import triton.language as tl


@triton.jit
def mv_sigmoid_sub_kernel(a_ptr, v_ptr, o_ptr, y_ptr, N, M, stride_an, stride_am, stride_v, stride_o,
                          alpha, o_scalar,
                          O_TENSOR: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr):
    # BLOCK_N rows per program; the row dot products accumulate in a float32 tile, reduced at the end.
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < N
    cols = tl.arange(0, BLOCK_M)
    a_row = a_ptr + rows.to(tl.int64)[:, None] * stride_an
    acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        c = m0 + cols
        c_ok = c < M
        a = tl.load(a_row + c.to(tl.int64)[None, :] * stride_am, mask=row_ok[:, None] & c_ok[None, :], other=0.0)
        v = tl.load(v_ptr + c.to(tl.int64) * stride_v, mask=c_ok, other=0.0)
        acc += a.to(tl.float32) * v.to(tl.float32)[None, :]
    z = tl.sum(acc, axis=1)
    s = tl.sigmoid(z)
    if O_TENSOR:
        o = tl.load(o_ptr + rows * stride_o, mask=row_ok, other=0.0).to(tl.float32)
    else:
        o = o_scalar
    tl.store(y_ptr + rows, (s - alpha * o).to(y_ptr.dtype.element_ty), mask=row_ok)


def fused_mv_sigmoid_sub(input, vec, other, alpha=1, *, out=None):
    if input.dim() != 2 or vec.dim() != 1 or input.shape[1] != vec.shape[0]:
        raise ValueError("expected input (n, m) and vec (m,)")
    n, m = input.shape
    y = torch.empty((n,), dtype=input.dtype, device=input.device)
    is_tensor = isinstance(other, torch.Tensor)
    o, stride_o, o_scalar = y, 0, 0.0
    if is_tensor:
        o = other.reshape(-1) if other.dim() == 0 else other
        if o.dim() != 1 or o.shape[0] not in (1, n):
            raise ValueError("other must broadcast to (n,)")
        stride_o = o.stride(0) if o.shape[0] == n else 0
    else:
        o_scalar = float(other)
    if n > 0:
        block_n = 16
        # column tile along the contiguous dimension when the input is row-major
        block_m = min(256, max(16, triton.next_power_of_2(m)))
        mv_sigmoid_sub_kernel[(triton.cdiv(n, block_n),)](
            input, vec, o, y, n, m, input.stride(0), input.stride(1), vec.stride(0), stride_o,
            float(alpha), o_scalar, O_TENSOR=is_tensor, BLOCK_N=block_n, BLOCK_M=block_m, num_warps=4)
    if out is not None:
        out.copy_(y)
        return out
    return y
