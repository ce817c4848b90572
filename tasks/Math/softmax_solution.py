import torch
import triton
import triton.language as tl

MAX_SINGLE = 8192   # longest slice kept whole in one block
TILE = 4096         # elements per tile when several slices share a program
MIN_PROGRAMS = 256  # about two programs per H100 SM


@triton.jit
def softmax_rows_kernel(x_ptr, y_ptr, M, K,
                        ROUND: tl.constexpr, F64: tl.constexpr, SINGLE: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # x, y are (M, K) contiguous; softmax along K. ROUND: convert the input to y's dtype first.
    cty = tl.float64 if F64 else tl.float32
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    cols = tl.arange(0, BLOCK_K)
    x_row = x_ptr + rows[:, None] * K
    y_row = y_ptr + rows[:, None] * K
    if SINGLE:
        mask = row_mask[:, None] & (cols < K)[None, :]
        x = tl.load(x_row + cols[None, :], mask=mask, other=float("-inf"))
        if ROUND:
            x = x.to(y_ptr.dtype.element_ty)
        x = x.to(cty)
        m = tl.maximum(tl.max(x, axis=1), -1.0e30)  # finite even for masked-off rows
        e = tl.exp(x - m[:, None])
        s = tl.sum(e, axis=1)
        y = e * (1.0 / s)[:, None]
        tl.store(y_row + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        # pass 1: running maximum and running sum of exp(x - max), rescaled when the maximum grows
        m = tl.full((BLOCK_M,), -1.0e30, dtype=cty)
        s = tl.zeros((BLOCK_M,), dtype=cty)
        for k0 in range(0, K, BLOCK_K):
            k = k0 + cols
            mask = row_mask[:, None] & (k < K)[None, :]
            x = tl.load(x_row + k[None, :], mask=mask, other=float("-inf"))
            if ROUND:
                x = x.to(y_ptr.dtype.element_ty)
            x = x.to(cty)
            m_new = tl.maximum(m, tl.max(x, axis=1))
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new[:, None]), axis=1)
            m = m_new
        inv = 1.0 / s
        # pass 2: normalise
        for k0 in range(0, K, BLOCK_K):
            k = k0 + cols
            mask = row_mask[:, None] & (k < K)[None, :]
            x = tl.load(x_row + k[None, :], mask=mask, other=float("-inf"))
            if ROUND:
                x = x.to(y_ptr.dtype.element_ty)
            x = x.to(cty)
            y = tl.exp(x - m[:, None]) * inv[:, None]
            tl.store(y_row + k[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_cols_kernel(x_ptr, y_ptr, A, K, B,
                        ROUND: tl.constexpr, F64: tl.constexpr, SINGLE: tl.constexpr,
                        BLOCK_K: tl.constexpr, BLOCK_B: tl.constexpr):
    # x, y are (A, K, B) contiguous; softmax along K for every (a, b). A program owns one `a` and
    # BLOCK_B neighbouring columns, so each loaded tile row is contiguous in memory.
    cty = tl.float64 if F64 else tl.float32
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
        x = tl.load(x_base + ks[:, None] * B, mask=mask, other=float("-inf"))
        if ROUND:
            x = x.to(y_ptr.dtype.element_ty)
        x = x.to(cty)
        m = tl.maximum(tl.max(x, axis=0), -1.0e30)  # finite even for masked-off columns
        e = tl.exp(x - m[None, :])
        s = tl.sum(e, axis=0)
        y = e * (1.0 / s)[None, :]
        tl.store(y_base + ks[:, None] * B, y.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        m = tl.full((BLOCK_B,), -1.0e30, dtype=cty)
        s = tl.zeros((BLOCK_B,), dtype=cty)
        for k0 in range(0, K, BLOCK_K):
            k = (k0 + ks).to(tl.int64)
            mask = (k < K)[:, None] & col_mask[None, :]
            x = tl.load(x_base + k[:, None] * B, mask=mask, other=float("-inf"))
            if ROUND:
                x = x.to(y_ptr.dtype.element_ty)
            x = x.to(cty)
            m_new = tl.maximum(m, tl.max(x, axis=0))
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new[None, :]), axis=0)
            m = m_new
        inv = 1.0 / s
        for k0 in range(0, K, BLOCK_K):
            k = (k0 + ks).to(tl.int64)
            mask = (k < K)[:, None] & col_mask[None, :]
            x = tl.load(x_base + k[:, None] * B, mask=mask, other=float("-inf"))
            if ROUND:
                x = x.to(y_ptr.dtype.element_ty)
            x = x.to(cty)
            y = tl.exp(x - m[None, :]) * inv[None, :]
            tl.store(y_base + k[:, None] * B, y.to(y_ptr.dtype.element_ty), mask=mask)


def _pow2(n):
    return triton.next_power_of_2(max(1, int(n)))


def softmax(input, dim, dtype=None):
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
    round_first = dtype is not None and dtype != input.dtype
    f64 = out_dtype == torch.float64
    if B == 1:
        M = A
        single = K <= MAX_SINGLE
        block_k = _pow2(K) if single else 2048
        block_m = min(_pow2(M), max(1, TILE // block_k)) if single else 1
        warps = min(16, max(4, block_m * block_k // 512))
        softmax_rows_kernel[(triton.cdiv(M, block_m),)](
            x, y, M, K, ROUND=round_first, F64=f64, SINGLE=single,
            BLOCK_M=block_m, BLOCK_K=block_k, num_warps=warps)
    else:
        block_b = min(_pow2(B), 128)
        while block_b > 16 and A * triton.cdiv(B, block_b) < MIN_PROGRAMS:
            block_b //= 2
        single = K * block_b <= MAX_SINGLE
        block_k = _pow2(K) if single else max(1, TILE // block_b)
        warps = min(16, max(4, block_k * block_b // 512))
        softmax_cols_kernel[(A * triton.cdiv(B, block_b),)](
            x, y, A, K, B, ROUND=round_first, F64=f64, SINGLE=single,
            BLOCK_K=block_k, BLOCK_B=block_b, num_warps=warps)
    return y
