import torch
import triton
import triton.language as tl

TILE = 4096  # elements per loaded tile
INT64_MAX = tl.constexpr(9223372036854775807)
SQRT_HALF = tl.constexpr(0.7071067811865476)
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)


@triton.jit
def _gelu(x, TANH: tl.constexpr):
    if TANH:
        inner = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
        y = 0.5 * x * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    else:
        y = 0.5 * x * (1.0 + tl.erf(x * SQRT_HALF))
    return y


@triton.jit
def min_gelu_rows_kernel(x_ptr, val_ptr, idx_ptr, M, K, TANH: tl.constexpr, WITH_INDEX: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # x is (M, K) contiguous. Each lane keeps the first position of the smallest GELU value it
    # has seen (values rounded to the input dtype, as the result is); the smallest such position
    # among the lanes that hold the row minimum is the first occurrence.
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    cols = tl.arange(0, BLOCK_K)
    best = tl.full((BLOCK_M, BLOCK_K), float("inf"), tl.float32)
    best_i = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.int64)
    base = x_ptr + rows[:, None] * K
    for k0 in range(0, K, BLOCK_K):
        k = k0 + cols
        mask = row_mask[:, None] & (k < K)[None, :]
        x = tl.load(base + k[None, :], mask=mask, other=0.0)
        g = _gelu(x.to(tl.float32), TANH).to(x.dtype).to(tl.float32)
        take = mask & (g < best)
        best = tl.where(take, g, best)
        best_i = tl.where(take, k[None, :].to(tl.int64), best_i)
    low = tl.min(best, axis=1)
    tl.store(val_ptr + rows, low.to(val_ptr.dtype.element_ty), mask=row_mask)
    if WITH_INDEX:
        first = tl.min(tl.where(best == low[:, None], best_i, INT64_MAX), axis=1)
        tl.store(idx_ptr + rows, first, mask=row_mask)


@triton.jit
def min_gelu_mid_kernel(x_ptr, val_ptr, idx_ptr, A, K, B, TANH: tl.constexpr,
                        BLOCK_K: tl.constexpr, BLOCK_B: tl.constexpr):
    # x is (A, K, B) contiguous; program (a, column block) reduces over K and writes [a, b].
    pid = tl.program_id(0)
    nb = tl.cdiv(B, BLOCK_B)
    a = (pid // nb).to(tl.int64)
    cols = (pid % nb).to(tl.int64) * BLOCK_B + tl.arange(0, BLOCK_B)
    col_mask = cols < B
    ks = tl.arange(0, BLOCK_K)
    best = tl.full((BLOCK_K, BLOCK_B), float("inf"), tl.float32)
    best_i = tl.zeros((BLOCK_K, BLOCK_B), dtype=tl.int64)
    base = x_ptr + a * K * B + cols[None, :]
    for k0 in range(0, K, BLOCK_K):
        k = k0 + ks
        mask = (k < K)[:, None] & col_mask[None, :]
        x = tl.load(base + k[:, None].to(tl.int64) * B, mask=mask, other=0.0)
        g = _gelu(x.to(tl.float32), TANH).to(x.dtype).to(tl.float32)
        take = mask & (g < best)
        best = tl.where(take, g, best)
        best_i = tl.where(take, k[:, None].to(tl.int64), best_i)
    low = tl.min(best, axis=0)
    first = tl.min(tl.where(best == low[None, :], best_i, INT64_MAX), axis=0)
    tl.store(val_ptr + a * B + cols, low.to(val_ptr.dtype.element_ty), mask=col_mask)
    tl.store(idx_ptr + a * B + cols, first, mask=col_mask)


def _pow2(n):
    return triton.next_power_of_2(max(1, int(n)))


def min_gelu(input, dim=None, keepdim=False, approximate="none", out=None):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    tanh = approximate == "tanh"
    x = input.contiguous()
    nd = x.dim()
    if dim is None:
        k = max(1, x.numel())
        value = torch.empty((), device=x.device, dtype=x.dtype)
        block_k = min(_pow2(k), TILE)
        min_gelu_rows_kernel[(1,)](x, value, value, 1, k, TANH=tanh, WITH_INDEX=False, BLOCK_M=1,
                                   BLOCK_K=block_k, num_warps=8 if block_k >= 4096 else 4)
        return value
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
    if b == 1:
        block_k = min(_pow2(k), 1024)
        block_m = min(_pow2(a), max(1, TILE // block_k))
        min_gelu_rows_kernel[(triton.cdiv(a, block_m),)](x, values, indices, a, k, TANH=tanh, WITH_INDEX=True,
                                                         BLOCK_M=block_m, BLOCK_K=block_k,
                                                         num_warps=8 if block_m * block_k >= 4096 else 4)
    else:
        block_b = min(_pow2(b), 64)
        block_k = min(_pow2(k), max(1, TILE // block_b))
        min_gelu_mid_kernel[(a * triton.cdiv(b, block_b),)](x, values, indices, a, k, b, TANH=tanh,
                                                            BLOCK_K=block_k, BLOCK_B=block_b,
                                                            num_warps=8 if block_k * block_b >= 4096 else 4)
    return values, indices
