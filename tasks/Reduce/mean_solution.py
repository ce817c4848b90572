import math

import torch
import triton
import triton.language as tl

TILE = 4096            # elements per loaded tile
TARGET_PROGRAMS = 528  # enough programs to fill an H100 a few times over


@triton.jit
def mean_rows_kernel(x_ptr, out_ptr, M, K, k_per_split, divisor,
                     BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # x is (M, K) contiguous; program (i, s) adds up rows [i*BLOCK_M, ...) over the columns of
    # split s, divides by `divisor` and writes out[s * M + row].
    pid_m = tl.program_id(0)
    pid_s = tl.program_id(1)
    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    cols = tl.arange(0, BLOCK_K)
    k_start = pid_s.to(tl.int64) * k_per_split
    k_end = tl.minimum(k_start + k_per_split, K)
    acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    base = x_ptr + rows[:, None] * K
    for k0 in range(k_start, k_end, BLOCK_K):
        k = k0 + cols
        mask = row_mask[:, None] & (k < k_end)[None, :]
        acc += tl.load(base + k[None, :], mask=mask, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=1) / divisor
    tl.store(out_ptr + pid_s.to(tl.int64) * M + rows, total.to(out_ptr.dtype.element_ty), mask=row_mask)


@triton.jit
def mean_mid_kernel(x_ptr, out_ptr, A, K, B, k_per_split, divisor,
                    BLOCK_K: tl.constexpr, BLOCK_B: tl.constexpr):
    # x is (A, K, B) contiguous; program (a * nb + j, s) adds up x[a, k, j*BLOCK_B:...] over the k
    # of split s, divides by `divisor` and writes out[s, a, b].
    pid = tl.program_id(0)
    pid_s = tl.program_id(1)
    nb = tl.cdiv(B, BLOCK_B)
    a = (pid // nb).to(tl.int64)
    cols = (pid % nb).to(tl.int64) * BLOCK_B + tl.arange(0, BLOCK_B)
    col_mask = cols < B
    ks = tl.arange(0, BLOCK_K)
    k_start = pid_s.to(tl.int64) * k_per_split
    k_end = tl.minimum(k_start + k_per_split, K)
    acc = tl.zeros((BLOCK_K, BLOCK_B), dtype=tl.float32)
    base = x_ptr + a * K * B + cols[None, :]
    for k0 in range(k_start, k_end, BLOCK_K):
        k = k0 + ks
        mask = (k < k_end)[:, None] & col_mask[None, :]
        acc += tl.load(base + k[:, None] * B, mask=mask, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=0) / divisor
    dst = out_ptr + pid_s.to(tl.int64) * A * B + a * B + cols
    tl.store(dst, total.to(out_ptr.dtype.element_ty), mask=col_mask)


def _pow2(n):
    return triton.next_power_of_2(max(1, int(n)))


def _splits(programs, K, block_k):
    """How many pieces to cut the reduced length into so that enough programs run."""
    if programs >= TARGET_PROGRAMS // 2 or K <= 4 * block_k:
        return 1, K
    want = min(triton.cdiv(TARGET_PROGRAMS, programs), triton.cdiv(K, 2 * block_k))
    per = triton.cdiv(triton.cdiv(K, want), block_k) * block_k
    return triton.cdiv(K, per), per


def _reduce_rows(x, M, K, out, divisor):
    block_k = min(_pow2(K), 1024)
    block_m = min(_pow2(M), max(1, TILE // block_k))
    programs = triton.cdiv(M, block_m)
    splits, per = _splits(programs, K, block_k)
    dst = out if splits == 1 else torch.empty((splits, M), device=x.device, dtype=torch.float32)
    warps = 8 if block_m * block_k >= 4096 else 4
    mean_rows_kernel[(programs, splits)](x, dst, M, K, per, 1.0 if splits > 1 else divisor,
                                         BLOCK_M=block_m, BLOCK_K=block_k, num_warps=warps)
    if splits > 1:  # add up the partial sums of the splits, then divide
        _reduce_mid(dst, 1, splits, M, out, divisor)


def _reduce_mid(x, A, K, B, out, divisor):
    block_b = min(_pow2(B), 256)
    block_k = min(_pow2(K), max(1, TILE // block_b))
    programs = A * triton.cdiv(B, block_b)
    splits, per = _splits(programs, K, block_k)
    dst = out if splits == 1 else torch.empty((splits, A * B), device=x.device, dtype=torch.float32)
    warps = 8 if block_b * block_k >= 4096 else 4
    mean_mid_kernel[(programs, splits)](x, dst, A, K, B, per, 1.0 if splits > 1 else divisor,
                                        BLOCK_K=block_k, BLOCK_B=block_b, num_warps=warps)
    if splits > 1:
        _reduce_mid(dst, 1, splits, A * B, out, divisor)


def mean(input_tensor, dim, keepdim=False, dtype=None, out=None):
    x = input_tensor
    if dtype is not None and dtype != x.dtype:
        x = x.to(dtype)
    if not x.dtype.is_floating_point:
        raise TypeError("mean needs a floating-point input or dtype")
    nd = x.dim()
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        dims = list(range(nd))
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim)
    reduced = {d % nd for d in dims} if nd > 0 else set()
    shape = list(x.shape)
    if keepdim:
        out_shape = [1 if d in reduced else s for d, s in enumerate(shape)]
    else:
        out_shape = [s for d, s in enumerate(shape) if d not in reduced]
    result = torch.empty(out_shape, device=x.device, dtype=x.dtype)
    count = math.prod(shape[d] for d in reduced)
    divisor = float(count) if count else float("nan")
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
    m_out = max(1, result.numel())
    if kinds.count(True) == 0:
        _reduce_rows(x, m_out, 1, result, divisor)
    elif kinds.count(True) == 1:
        i = kinds.index(True)
        a = math.prod(s for s, _ in groups[:i])
        k = groups[i][0]
        b = math.prod(s for s, _ in groups[i + 1:])
        if b == 1:
            _reduce_rows(x, a, k, result, divisor)
        else:
            _reduce_mid(x, a, k, b, result, divisor)
    else:
        # reduced dims apart from each other: move them to the end first
        kept = [d for d in range(nd) if d not in reduced]
        red = [d for d in range(nd) if d in reduced]
        xp = x.permute(*kept, *red).contiguous()
        _reduce_rows(xp, m_out, count, result, divisor)
    if out is not None:
        out.copy_(result)
        return out
    return result
