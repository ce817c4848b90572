import torch
import triton
import triton.language as tl

MAX_SINGLE = 8192   # longest slice kept whole in one block
TILE = 4096         # elements per tile when several slices share a program
MIN_PROGRAMS = 256  # about two programs per H100 SM

# softmax(log(x)) = x / sum(x) along the slice for x >= 0; a slice holding a negative, NaN or +inf value
# (log gives NaN or +inf) or only zeros (every log is -inf) is NaN throughout, as the two-step form gives.


@triton.jit
def _bad(x):
    # 1.0 where log(x) is NaN or +inf: a negative, NaN or +inf value
    return ((x < 0.0) | (x != x) | (x == float("inf"))).to(tl.float32)


@triton.jit
def _slice_stats(x, axis: tl.constexpr):
    return tl.sum(x, axis=axis), tl.max(_bad(x), axis=axis)


@triton.jit
def softmax_log_rows_kernel(x_ptr, y_ptr, M, K, SINGLE: tl.constexpr, BLOCK_M: tl.constexpr,
                            BLOCK_K: tl.constexpr):
    # x, y are (M, K) contiguous; normalize along K
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    cols = tl.arange(0, BLOCK_K)
    x_row = x_ptr + rows[:, None] * K
    y_row = y_ptr + rows[:, None] * K
    if SINGLE:
        mask = row_mask[:, None] & (cols < K)[None, :]
        x = tl.load(x_row + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        s, bad = _slice_stats(x, 1)
        inv = tl.where((bad > 0.0) | (s == 0.0), float("nan"), 1.0 / s)
        tl.store(y_row + cols[None, :], (x * inv[:, None]).to(y_ptr.dtype.element_ty), mask=mask)
    else:
        # Tile-shaped partial sums, reduced once after the loop (a row reduction carried through the
        # loop trips an assertion in Triton 3.6's thread-locality pass).
        acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
        acc_bad = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            k = k0 + cols
            mask = row_mask[:, None] & (k < K)[None, :]
            x = tl.load(x_row + k[None, :], mask=mask, other=0.0).to(tl.float32)
            acc += x
            acc_bad = tl.maximum(acc_bad, _bad(x))
        s = tl.sum(acc, axis=1)
        bad = tl.max(acc_bad, axis=1)
        inv = tl.where((bad > 0.0) | (s == 0.0), float("nan"), 1.0 / s)
        for k0 in range(0, K, BLOCK_K):
            k = k0 + cols
            mask = row_mask[:, None] & (k < K)[None, :]
            x = tl.load(x_row + k[None, :], mask=mask, other=0.0).to(tl.float32)
            tl.store(y_row + k[None, :], (x * inv[:, None]).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_log_cols_kernel(x_ptr, y_ptr, A, K, B, SINGLE: tl.constexpr, BLOCK_K: tl.constexpr,
                            BLOCK_B: tl.constexpr):
    # x, y are (A, K, B) contiguous; normalize along K for every (a, b). A program owns one `a` and
    # BLOCK_B neighbouring columns, so each loaded tile row is contiguous in memory.
    pid = tl.program_id(0)
    nb = tl.cdiv(B, BLOCK_B)
    a = (pid // nb).to(tl.int64)
    cols = (pid % nb).to(tl.int64) * BLOCK_B + tl.arange(0, BLOCK_B)
    col_mask = cols < B
    ks = tl.arange(0, BLOCK_K)
    x_base = x_ptr + a * K * B + cols[None, :]
    y_base = y_ptr + a * K * B + cols[None, :]
    if SINGLE:
        mask = (ks < K)[:, None] & col_mask[None, :]
        x = tl.load(x_base + ks[:, None] * B, mask=mask, other=0.0).to(tl.float32)
        s, bad = _slice_stats(x, 0)
        inv = tl.where((bad > 0.0) | (s == 0.0), float("nan"), 1.0 / s)
        tl.store(y_base + ks[:, None] * B, (x * inv[None, :]).to(y_ptr.dtype.element_ty), mask=mask)
    else:
        s = tl.zeros((BLOCK_B,), dtype=tl.float32)
        bad = tl.zeros((BLOCK_B,), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            k = (k0 + ks).to(tl.int64)
            mask = (k < K)[:, None] & col_mask[None, :]
            x = tl.load(x_base + k[:, None] * B, mask=mask, other=0.0).to(tl.float32)
            t_s, t_bad = _slice_stats(x, 0)
            s += t_s
            bad = tl.maximum(bad, t_bad)
        inv = tl.where((bad > 0.0) | (s == 0.0), float("nan"), 1.0 / s)
        for k0 in range(0, K, BLOCK_K):
            k = (k0 + ks).to(tl.int64)
            mask = (k < K)[:, None] & col_mask[None, :]
            x = tl.load(x_base + k[:, None] * B, mask=mask, other=0.0).to(tl.float32)
            tl.store(y_base + k[:, None] * B, (x * inv[None, :]).to(y_ptr.dtype.element_ty), mask=mask)


def _pow2(n):
    return triton.next_power_of_2(max(1, int(n)))


def fused_softmax_log(input, dim=-1, dtype=None):
    x = input.contiguous()
    out_dtype = input.dtype if dtype is None else dtype
    y = torch.empty(x.shape, device=x.device, dtype=out_dtype)
    if x.numel() == 0:
        return y
    nd = x.dim()
    d = dim % nd if nd else 0
    shape = list(x.shape)
    A = 1
    for s in shape[:d]:
        A *= s
    K = shape[d] if nd else 1
    B = 1
    for s in shape[d + 1:]:
        B *= s
    if B == 1:
        single = K <= MAX_SINGLE
        block_k = _pow2(K) if single else 2048
        block_m = min(_pow2(A), max(1, TILE // block_k)) if single else 1
        warps = min(16, max(4, block_m * block_k // 512))
        softmax_log_rows_kernel[(triton.cdiv(A, block_m),)](
            x, y, A, K, SINGLE=single, BLOCK_M=block_m, BLOCK_K=block_k, num_warps=warps)
    else:
        block_b = min(_pow2(B), 128)
        while block_b > 16 and A * triton.cdiv(B, block_b) < MIN_PROGRAMS:
            block_b //= 2
        single = K * block_b <= MAX_SINGLE
        block_k = _pow2(K) if single else max(1, TILE // block_b)
        warps = min(16, max(4, block_k * block_b // 512))
        softmax_log_cols_kernel[(A * triton.cdiv(B, block_b),)](
            x, y, A, K, B, SINGLE=single, BLOCK_K=block_k, BLOCK_B=block_b, num_warps=warps)
    return y
