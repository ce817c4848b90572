import torch
import triton
import triton.language as tl

TILE = 4096  # elements per loaded tile
INT64_MAX = tl.constexpr(9223372036854775807)


@triton.jit
def argmax_rows_kernel(x_ptr, out_ptr, M, K, IS_INT: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # x is (M, K) contiguous; each row's first index of its maximum goes to out[row]. Every lane
    # keeps the first position of the largest value it has seen (strictly greater replaces), then
    # the smallest such position among the lanes holding the row maximum wins.
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    cols = tl.arange(0, BLOCK_K)
    if IS_INT:
        best = tl.full((BLOCK_M, BLOCK_K), -2147483648, tl.int32)
    else:
        best = tl.full((BLOCK_M, BLOCK_K), float("-inf"), tl.float32)
    best_i = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.int64)
    base = x_ptr + rows[:, None] * K
    for k0 in range(0, K, BLOCK_K):
        k = k0 + cols
        mask = row_mask[:, None] & (k < K)[None, :]
        x = tl.load(base + k[None, :], mask=mask)
        if not IS_INT:
            x = x.to(tl.float32)
        take = mask & (x > best)
        best = tl.where(take, x, best)
        best_i = tl.where(take, k[None, :].to(tl.int64), best_i)
    top = tl.max(best, axis=1)
    first = tl.min(tl.where(best == top[:, None], best_i, INT64_MAX), axis=1)
    tl.store(out_ptr + rows, first, mask=row_mask)


@triton.jit
def argmax_mid_kernel(x_ptr, out_ptr, A, K, B, IS_INT: tl.constexpr,
                      BLOCK_K: tl.constexpr, BLOCK_B: tl.constexpr):
    # x is (A, K, B) contiguous; program (a, column block) reduces over K and writes out[a, b].
    pid = tl.program_id(0)
    nb = tl.cdiv(B, BLOCK_B)
    a = (pid // nb).to(tl.int64)
    cols = (pid % nb).to(tl.int64) * BLOCK_B + tl.arange(0, BLOCK_B)
    col_mask = cols < B
    ks = tl.arange(0, BLOCK_K)
    if IS_INT:
        best = tl.full((BLOCK_K, BLOCK_B), -2147483648, tl.int32)
    else:
        best = tl.full((BLOCK_K, BLOCK_B), float("-inf"), tl.float32)
    best_i = tl.zeros((BLOCK_K, BLOCK_B), dtype=tl.int64)
    base = x_ptr + a * K * B + cols[None, :]
    for k0 in range(0, K, BLOCK_K):
        k = k0 + ks
        mask = (k < K)[:, None] & col_mask[None, :]
        x = tl.load(base + k[:, None].to(tl.int64) * B, mask=mask)
        if not IS_INT:
            x = x.to(tl.float32)
        take = mask & (x > best)
        best = tl.where(take, x, best)
        best_i = tl.where(take, k[:, None].to(tl.int64), best_i)
    top = tl.max(best, axis=0)
    first = tl.min(tl.where(best == top[None, :], best_i, INT64_MAX), axis=0)
    tl.store(out_ptr + a * B + cols, first, mask=col_mask)


def _pow2(n):
    return triton.next_power_of_2(max(1, int(n)))


def argmax(input_tensor, dim, keepdim=False):
    x = input_tensor.contiguous()
    nd = x.dim()
    if dim is None:
        a, k, b = 1, max(1, x.numel()), 1
        out_shape = [1] * nd if keepdim else []
    else:
        d = dim % nd if nd > 0 else 0
        shape = list(x.shape) if nd > 0 else [1]
        a = 1
        for s in shape[:d]:
            a *= s
        k = shape[d]
        b = 1
        for s in shape[d + 1:]:
            b *= s
        out_shape = list(x.shape)
        if nd > 0:
            if keepdim:
                out_shape[d] = 1
            else:
                out_shape.pop(d)
    out = torch.empty(out_shape, device=x.device, dtype=torch.int64)
    is_int = not x.dtype.is_floating_point
    if b == 1:
        block_k = min(_pow2(k), 1024)
        block_m = min(_pow2(a), max(1, TILE // block_k))
        argmax_rows_kernel[(triton.cdiv(a, block_m),)](x, out, a, k, IS_INT=is_int, BLOCK_M=block_m,
                                                       BLOCK_K=block_k, num_warps=8 if block_m * block_k >= 4096 else 4)
    else:
        block_b = min(_pow2(b), 64)
        block_k = min(_pow2(k), max(1, TILE // block_b))
        argmax_mid_kernel[(a * triton.cdiv(b, block_b),)](x, out, a, k, b, IS_INT=is_int, BLOCK_K=block_k,
                                                          BLOCK_B=block_b, num_warps=8 if block_k * block_b >= 4096 else 4)
    return out
