import math

import torch
import triton
import triton.language as tl

TILE = 4096          # elements per loaded tile
TARGET_PROGRAMS = 528  # enough programs to fill an H100 a few times over


@triton.jit
def sum_rows_kernel(x_ptr, out_ptr, M, K, k_per_split,
                    F64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # x is (M, K) contiguous; program (i, s) sums rows [i*BLOCK_M, ...) over columns of split s
    # and writes out[s * M + row].
    pid_m = tl.program_id(0)
    pid_s = tl.program_id(1)
    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    cols = tl.arange(0, BLOCK_K)
    k_start = pid_s.to(tl.int64) * k_per_split
    k_end = tl.minimum(k_start + k_per_split, K)
    acc_ty = tl.float64 if F64 else tl.float32
    acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=acc_ty)
    base = x_ptr + rows[:, None] * K
    for k0 in range(k_start, k_end, BLOCK_K):
        k = k0 + cols
        mask = row_mask[:, None] & (k < k_end)[None, :]
        acc += tl.load(base + k[None, :], mask=mask, other=0.0).to(acc_ty)
    total = tl.sum(acc, axis=1)
    tl.store(out_ptr + pid_s.to(tl.int64) * M + rows, total.to(out_ptr.dtype.element_ty), mask=row_mask)


@triton.jit
def sum_mid_kernel(x_ptr, out_ptr, A, K, B, k_per_split,
                   F64: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_B: tl.constexpr):
    # x is (A, K, B) contiguous; program (a * nb + j, s) sums x[a, k, j*BLOCK_B:...] over the k of
    # split s and writes out[s, a, b] (laid out as s * A * B + a * B + b).
    pid = tl.program_id(0)
    pid_s = tl.program_id(1)
    nb = tl.cdiv(B, BLOCK_B)
    a = (pid // nb).to(tl.int64)
    cols = (pid % nb).to(tl.int64) * BLOCK_B + tl.arange(0, BLOCK_B)
    col_mask = cols < B
    ks = tl.arange(0, BLOCK_K)
    k_start = pid_s.to(tl.int64) * k_per_split
    k_end = tl.minimum(k_start + k_per_split, K)
    acc_ty = tl.float64 if F64 else tl.float32
    acc = tl.zeros((BLOCK_K, BLOCK_B), dtype=acc_ty)
    base = x_ptr + a * K * B + cols[None, :]
    for k0 in range(k_start, k_end, BLOCK_K):
        k = k0 + ks
        mask = (k < k_end)[:, None] & col_mask[None, :]
        acc += tl.load(base + k[:, None] * B, mask=mask, other=0.0).to(acc_ty)
    total = tl.sum(acc, axis=0)
    dst = out_ptr + pid_s.to(tl.int64) * A * B + a * B + cols
    tl.store(dst, total.to(out_ptr.dtype.element_ty), mask=col_mask)


def _pow2(n):
    return triton.next_power_of_2(max(1, int(n)))


def _splits(programs, K, block_k):
    """How many pieces to cut the reduced length into so that enough programs run."""
    if programs >= TARGET_PROGRAMS // 2 or K <= 8 * block_k:
        return 1, K
    want = min(triton.cdiv(TARGET_PROGRAMS, programs), triton.cdiv(K, 4 * block_k))
    per = triton.cdiv(triton.cdiv(K, want), block_k) * block_k
    return triton.cdiv(K, per), per


def _reduce_rows(x, M, K, out, f64):
    block_k = min(_pow2(K), 1024)
    block_m = min(_pow2(M), max(1, TILE // block_k))
    programs = triton.cdiv(M, block_m)
    splits, per = _splits(programs, K, block_k)
    acc_dtype = torch.float64 if f64 else torch.float32
    dst = out if splits == 1 else torch.empty((splits, M), device=x.device, dtype=acc_dtype)
    warps = 8 if block_m * block_k >= 4096 else 4
    sum_rows_kernel[(programs, splits)](x, dst, M, K, per, F64=f64, BLOCK_M=block_m, BLOCK_K=block_k,
                                        num_warps=warps)
    if splits > 1:
        _reduce_mid(dst, 1, splits, M, out, f64)


def _reduce_mid(x, A, K, B, out, f64):
    block_b = min(_pow2(B), 256)
    block_k = min(_pow2(K), max(1, TILE // block_b))
    programs = A * triton.cdiv(B, block_b)
    splits, per = _splits(programs, K, block_k)
    acc_dtype = torch.float64 if f64 else torch.float32
    dst = out if splits == 1 else torch.empty((splits, A * B), device=x.device, dtype=acc_dtype)
    warps = 8 if block_b * block_k >= 4096 else 4
    sum_mid_kernel[(programs, splits)](x, dst, A, K, B, per, F64=f64, BLOCK_K=block_k, BLOCK_B=block_b,
                                       num_warps=warps)
    if splits > 1:
        _reduce_mid(dst, 1, splits, A * B, out, f64)


def sum(input, dim, keepdim=False, dtype=None):
    x = input
    if dtype is not None and dtype != x.dtype:
        x = x.to(dtype)
    out_dtype = x.dtype
    nd = x.dim()
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        dims = list(range(nd))  # torch reduces every dim for dim=None or an empty tuple
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim)
    if nd == 0:
        reduced = set()
    else:
        reduced = {d % nd for d in dims}
    shape = list(x.shape)
    if keepdim:
        out_shape = [1 if d in reduced else s for d, s in enumerate(shape)]
    else:
        out_shape = [s for d, s in enumerate(shape) if d not in reduced]
    out = torch.empty(out_shape, device=x.device, dtype=out_dtype)
    f64 = out_dtype == torch.float64
    x = x.contiguous()

    # Merge neighbouring dims of the same kind (size-1 dims do not matter for the layout).
    groups = []  # [size, is_reduced]
    for d, s in enumerate(shape):
        if s == 1:
            continue
        r = d in reduced
        if groups and groups[-1][1] == r:
            groups[-1][0] *= s
        else:
            groups.append([s, r])
    kinds = [r for _, r in groups]
    m_out = max(1, out.numel())
    if kinds.count(True) == 0:
        _reduce_rows(x, m_out, 1, out, f64)
    elif kinds.count(True) == 1:
        i = kinds.index(True)
        A = math.prod(s for s, _ in groups[:i])
        K = groups[i][0]
        B = math.prod(s for s, _ in groups[i + 1:])
        if B == 1:
            _reduce_rows(x, A, K, out, f64)
        else:
            _reduce_mid(x, A, K, B, out, f64)
    else:
        kept = [d for d in range(nd) if d not in reduced]
        red = [d for d in range(nd) if d in reduced]
        K = math.prod(shape[d] for d in red)
        xp = x.permute(*kept, *red).contiguous()
        _reduce_rows(xp, m_out, K, out, f64)
    return out
