import math

import torch
import triton
import triton.language as tl

TILE = 4096            # elements per loaded tile
TARGET_PROGRAMS = 528  # enough programs to fill an H100 a few times over


@triton.jit
def std_rows_kernel(x_ptr, out_ptr, mean_ptr, m2_ptr, M, K, k_per_split, denom,
                    PARTIAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # x is (M, K) contiguous; program (i, s) reduces rows [i*BLOCK_M, ...) over the columns of
    # split s. Every lane runs Welford's update (stable for data with a large mean); the lanes are
    # combined once at the end. PARTIAL: write the split's mean and sum of squared deviations (M2)
    # to mean[s, row], m2[s, row]; otherwise write sqrt(M2 / denom).
    pid_m = tl.program_id(0)
    pid_s = tl.program_id(1)
    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    cols = tl.arange(0, BLOCK_K)
    k_start = pid_s.to(tl.int64) * k_per_split
    k_end = tl.minimum(k_start + k_per_split, K)
    mean = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    m2 = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    seen = 0.0  # elements per lane so far (only the last chunk can be partial)
    base = x_ptr + rows[:, None] * K
    for k0 in range(k_start, k_end, BLOCK_K):
        k = k0 + cols
        mask = row_mask[:, None] & (k < k_end)[None, :]
        x = tl.load(base + k[None, :], mask=mask, other=0.0).to(tl.float32)
        seen += 1.0
        delta = x - mean
        new_mean = mean + delta * (1.0 / seen)
        m2 = tl.where(mask, m2 + delta * (x - new_mean), m2)
        mean = tl.where(mask, new_mean, mean)
    # lane j saw every chunk if it was inside the last one, one chunk fewer otherwise
    span = k_end - k_start
    chunks = (span + BLOCK_K - 1) // BLOCK_K
    last = span - (chunks - 1) * BLOCK_K
    count = tl.where(cols < last, chunks, chunks - 1).to(tl.float32)
    row_mean = tl.sum(mean * count[None, :], axis=1) / span.to(tl.float32)
    dev = mean - row_mean[:, None]
    row_m2 = tl.sum(m2 + count[None, :] * dev * dev, axis=1)
    dst = pid_s.to(tl.int64) * M + rows
    if PARTIAL:
        tl.store(mean_ptr + dst, row_mean, mask=row_mask)
        tl.store(m2_ptr + dst, row_m2, mask=row_mask)
    else:
        tl.store(out_ptr + dst, tl.sqrt(row_m2 / denom).to(out_ptr.dtype.element_ty), mask=row_mask)


@triton.jit
def std_mid_kernel(x_ptr, out_ptr, mean_ptr, m2_ptr, A, K, B, k_per_split, denom,
                   PARTIAL: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_B: tl.constexpr):
    # x is (A, K, B) contiguous; program (a * nb + j, s) reduces x[a, k, j*BLOCK_B:...] over the k
    # of split s with per-lane Welford updates as in std_rows_kernel, and writes [s, a, b].
    pid = tl.program_id(0)
    pid_s = tl.program_id(1)
    nb = tl.cdiv(B, BLOCK_B)
    a = (pid // nb).to(tl.int64)
    cols = (pid % nb).to(tl.int64) * BLOCK_B + tl.arange(0, BLOCK_B)
    col_mask = cols < B
    ks = tl.arange(0, BLOCK_K)
    k_start = pid_s.to(tl.int64) * k_per_split
    k_end = tl.minimum(k_start + k_per_split, K)
    mean = tl.zeros((BLOCK_K, BLOCK_B), dtype=tl.float32)
    m2 = tl.zeros((BLOCK_K, BLOCK_B), dtype=tl.float32)
    seen = 0.0
    base = x_ptr + a * K * B + cols[None, :]
    for k0 in range(k_start, k_end, BLOCK_K):
        k = k0 + ks
        mask = (k < k_end)[:, None] & col_mask[None, :]
        x = tl.load(base + k[:, None] * B, mask=mask, other=0.0).to(tl.float32)
        seen += 1.0
        delta = x - mean
        new_mean = mean + delta * (1.0 / seen)
        m2 = tl.where(mask, m2 + delta * (x - new_mean), m2)
        mean = tl.where(mask, new_mean, mean)
    span = k_end - k_start
    chunks = (span + BLOCK_K - 1) // BLOCK_K
    last = span - (chunks - 1) * BLOCK_K
    count = tl.where(ks < last, chunks, chunks - 1).to(tl.float32)
    col_mean = tl.sum(mean * count[:, None], axis=0) / span.to(tl.float32)
    dev = mean - col_mean[None, :]
    col_m2 = tl.sum(m2 + count[:, None] * dev * dev, axis=0)
    dst = pid_s.to(tl.int64) * A * B + a * B + cols
    if PARTIAL:
        tl.store(mean_ptr + dst, col_mean, mask=col_mask)
        tl.store(m2_ptr + dst, col_m2, mask=col_mask)
    else:
        tl.store(out_ptr + dst, tl.sqrt(col_m2 / denom).to(out_ptr.dtype.element_ty), mask=col_mask)


@triton.jit
def std_combine_kernel(mean_ptr, m2_ptr, out_ptr, S, R, K, k_per_split, denom,
                       BLOCK_S: tl.constexpr, BLOCK_R: tl.constexpr):
    # mean and m2 are (S, R): split s of output r covered min(k_per_split, K - s*k_per_split)
    # elements. The overall mean is the count-weighted mean of the split means, and
    # M2 = sum(m2_s) + sum(n_s * (mean_s - mean)**2).
    r = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    r_mask = r < R
    ss = tl.arange(0, BLOCK_S)
    wsum = tl.zeros((BLOCK_S, BLOCK_R), dtype=tl.float32)
    for s0 in range(0, S, BLOCK_S):
        s = s0 + ss
        mask = (s < S)[:, None] & r_mask[None, :]
        n_s = tl.minimum(k_per_split, K - s.to(tl.int64) * k_per_split).to(tl.float32)
        mu = tl.load(mean_ptr + s[:, None].to(tl.int64) * R + r[None, :], mask=mask, other=0.0)
        wsum += tl.where(mask, n_s[:, None] * mu, 0.0)
    mean = tl.sum(wsum, axis=0) / K
    acc = tl.zeros((BLOCK_S, BLOCK_R), dtype=tl.float32)
    for s0 in range(0, S, BLOCK_S):
        s = s0 + ss
        mask = (s < S)[:, None] & r_mask[None, :]
        n_s = tl.minimum(k_per_split, K - s.to(tl.int64) * k_per_split).to(tl.float32)
        mu = tl.load(mean_ptr + s[:, None].to(tl.int64) * R + r[None, :], mask=mask, other=0.0)
        m2 = tl.load(m2_ptr + s[:, None].to(tl.int64) * R + r[None, :], mask=mask, other=0.0)
        d = mu - mean[None, :]
        acc += tl.where(mask, m2 + n_s[:, None] * d * d, 0.0)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + r, tl.sqrt(total / denom).to(out_ptr.dtype.element_ty), mask=r_mask)


def _pow2(n):
    return triton.next_power_of_2(max(1, int(n)))


def _splits(programs, K, block_k):
    """How many pieces to cut the reduced length into so that enough programs run."""
    if programs >= TARGET_PROGRAMS // 2 or K <= 4 * block_k:
        return 1, K
    want = min(triton.cdiv(TARGET_PROGRAMS, programs), triton.cdiv(K, 2 * block_k))
    per = triton.cdiv(triton.cdiv(K, want), block_k) * block_k
    return triton.cdiv(K, per), per


def _combine(means, m2s, out, splits, R, K, per, denom):
    block_r = min(_pow2(R), 128)
    block_s = min(_pow2(splits), max(1, 4096 // block_r))
    std_combine_kernel[(triton.cdiv(R, block_r),)](means, m2s, out, splits, R, K, per, denom,
                                                   BLOCK_S=block_s, BLOCK_R=block_r, num_warps=4)


def _std_rows(x, M, K, out, denom):
    block_k = min(_pow2(K), 1024)
    block_m = min(_pow2(M), max(1, TILE // block_k))
    programs = triton.cdiv(M, block_m)
    splits, per = _splits(programs, K, block_k)
    warps = 8 if block_m * block_k >= 4096 else 4
    if splits == 1:
        std_rows_kernel[(programs, 1)](x, out, out, out, M, K, K, denom, PARTIAL=False,
                                       BLOCK_M=block_m, BLOCK_K=block_k, num_warps=warps)
        return
    means = torch.empty((splits, M), device=x.device, dtype=torch.float32)
    m2s = torch.empty((splits, M), device=x.device, dtype=torch.float32)
    std_rows_kernel[(programs, splits)](x, out, means, m2s, M, K, per, denom, PARTIAL=True,
                                        BLOCK_M=block_m, BLOCK_K=block_k, num_warps=warps)
    _combine(means, m2s, out, splits, M, K, per, denom)


def _std_mid(x, A, K, B, out, denom):
    block_b = min(_pow2(B), 256)
    block_k = min(_pow2(K), max(1, TILE // block_b))
    programs = A * triton.cdiv(B, block_b)
    splits, per = _splits(programs, K, block_k)
    warps = 8 if block_b * block_k >= 4096 else 4
    if splits == 1:
        std_mid_kernel[(programs, 1)](x, out, out, out, A, K, B, K, denom, PARTIAL=False,
                                      BLOCK_K=block_k, BLOCK_B=block_b, num_warps=warps)
        return
    means = torch.empty((splits, A * B), device=x.device, dtype=torch.float32)
    m2s = torch.empty((splits, A * B), device=x.device, dtype=torch.float32)
    std_mid_kernel[(programs, splits)](x, out, means, m2s, A, K, B, per, denom, PARTIAL=True,
                                       BLOCK_K=block_k, BLOCK_B=block_b, num_warps=warps)
    _combine(means, m2s, out, splits, A * B, K, per, denom)


def std(input, dim=None, correction=1, keepdim=False, out=None):
    x = input
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
    denom = float(count - correction)
    if denom < 0:
        denom = 0.0
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
        _std_rows(x, m_out, max(1, count), result, denom)
    elif kinds.count(True) == 1:
        i = kinds.index(True)
        a = math.prod(s for s, _ in groups[:i])
        k = groups[i][0]
        b = math.prod(s for s, _ in groups[i + 1:])
        if b == 1:
            _std_rows(x, a, k, result, denom)
        else:
            _std_mid(x, a, k, b, result, denom)
    else:
        # reduced dims apart from each other: move them to the end first
        kept = [d for d in range(nd) if d not in reduced]
        red = [d for d in range(nd) if d in reduced]
        xp = x.permute(*kept, *red).contiguous()
        _std_rows(xp, m_out, count, result, denom)
    if out is not None:
        out.copy_(result)
        return out
    return result
