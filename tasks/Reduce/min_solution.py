import torch
import triton
import triton.language as tl

TILE = 4096  # elements per loaded tile
INT64_MAX = tl.constexpr(9223372036854775807)


@triton.jit
def min_rows_kernel(x_ptr, val_ptr, idx_ptr, M, K, IS_INT: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # x is (M, K) contiguous. Every lane keeps the first position of the smallest value it has seen
    # (only a strictly smaller value replaces it); the smallest such position among the lanes that
    # hold the row minimum is the row's first occurrence.
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    cols = tl.arange(0, BLOCK_K)
    if IS_INT:
        best = tl.full((BLOCK_M, BLOCK_K), 2147483647, tl.int32)
    else:
        best = tl.full((BLOCK_M, BLOCK_K), float("inf"), tl.float32)
    best_i = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.int64)
    base = x_ptr + rows[:, None] * K
    for k0 in range(0, K, BLOCK_K):
        k = k0 + cols
        mask = row_mask[:, None] & (k < K)[None, :]
        x = tl.load(base + k[None, :], mask=mask)
        if not IS_INT:
            x = x.to(tl.float32)
        take = mask & (x < best)
        best = tl.where(take, x, best)
        best_i = tl.where(take, k[None, :].to(tl.int64), best_i)
    low = tl.min(best, axis=1)
    first = tl.min(tl.where(best == low[:, None], best_i, INT64_MAX), axis=1)
    tl.store(val_ptr + rows, low.to(val_ptr.dtype.element_ty), mask=row_mask)
    tl.store(idx_ptr + rows, first, mask=row_mask)


@triton.jit
def min_mid_kernel(x_ptr, val_ptr, idx_ptr, A, K, B, IS_INT: tl.constexpr,
                   BLOCK_K: tl.constexpr, BLOCK_B: tl.constexpr):
    # x is (A, K, B) contiguous; program (a, column block) reduces over K and writes [a, b].
    pid = tl.program_id(0)
    nb = tl.cdiv(B, BLOCK_B)
    a = (pid // nb).to(tl.int64)
    cols = (pid % nb).to(tl.int64) * BLOCK_B + tl.arange(0, BLOCK_B)
    col_mask = cols < B
    ks = tl.arange(0, BLOCK_K)
    if IS_INT:
        best = tl.full((BLOCK_K, BLOCK_B), 2147483647, tl.int32)
    else:
        best = tl.full((BLOCK_K, BLOCK_B), float("inf"), tl.float32)
    best_i = tl.zeros((BLOCK_K, BLOCK_B), dtype=tl.int64)
    base = x_ptr + a * K * B + cols[None, :]
    for k0 in range(0, K, BLOCK_K):
        k = k0 + ks
        mask = (k < K)[:, None] & col_mask[None, :]
        x = tl.load(base + k[:, None].to(tl.int64) * B, mask=mask)
        if not IS_INT:
            x = x.to(tl.float32)
        take = mask & (x < best)
        best = tl.where(take, x, best)
        best_i = tl.where(take, k[:, None].to(tl.int64), best_i)
    low = tl.min(best, axis=0)
    first = tl.min(tl.where(best == low[None, :], best_i, INT64_MAX), axis=0)
    tl.store(val_ptr + a * B + cols, low.to(val_ptr.dtype.element_ty), mask=col_mask)
    tl.store(idx_ptr + a * B + cols, first, mask=col_mask)


def _pow2(n):
    return triton.next_power_of_2(max(1, int(n)))


def min(input_tensor, dim, keepdim=False):
    x = input_tensor.contiguous()
    nd = x.dim()
    shape = list(x.shape) if nd > 0 else [1]
    d = dim % nd if nd > 0 else 0
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
    values = torch.empty(out_shape, device=x.device, dtype=x.dtype)
    indices = torch.empty(out_shape, device=x.device, dtype=torch.int64)
    is_int = not x.dtype.is_floating_point
    if b == 1:
        block_k = _pow2(k) if k < 1024 else 1024
        block_m = _pow2(a) if _pow2(a) * block_k <= TILE else TILE // block_k
        min_rows_kernel[(triton.cdiv(a, block_m),)](x, values, indices, a, k, IS_INT=is_int, BLOCK_M=block_m,
                                                    BLOCK_K=block_k, num_warps=8 if block_m * block_k >= 4096 else 4)
    else:
        block_b = _pow2(b) if b < 64 else 64
        block_k = _pow2(k) if _pow2(k) * block_b <= TILE else TILE // block_b
        min_mid_kernel[(a * triton.cdiv(b, block_b),)](x, values, indices, a, k, b, IS_INT=is_int,
                                                       BLOCK_K=block_k, BLOCK_B=block_b,
                                                       num_warps=8 if block_k * block_b >= 4096 else 4)
    return values, indices
