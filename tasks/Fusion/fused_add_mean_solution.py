import torch
import triton
import triton.language as tl

TARGET_TILE = 4096    # elements loaded per step by one program
MIN_SPLIT_WORK = 8192  # split a row over several programs only when each still gets this much
MAX_PROGRAMS = 1024


@triton.jit
def add_sum_kernel(x_ptr, o_ptr, part_ptr, y_ptr, M, N, cols_per_split,
                   sxm, sxn, som, son, alpha, scalar, inv_n,
                   TENSOR: tl.constexpr, FINAL: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Program (i, j) sums x + alpha * other over rows i*BLOCK_M.. and the columns of split j.
    # FINAL: one split, so write the mean itself; otherwise write the partial sum to part[j, row].
    pid_m = tl.program_id(0)
    split = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    rows64 = rows.to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    c_begin = split * cols_per_split
    c_end = tl.minimum(c_begin + cols_per_split, N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for c0 in range(c_begin, c_end, BLOCK_N):
        c = (c0 + cols).to(tl.int64)
        mask = row_ok[:, None] & (c < c_end)[None, :]
        x = tl.load(x_ptr + rows64[:, None] * sxm + c[None, :] * sxn, mask=mask, other=0.0).to(tl.float32)
        if TENSOR:
            o = tl.load(o_ptr + rows64[:, None] * som + c[None, :] * son, mask=mask, other=0.0).to(tl.float32)
            acc += tl.where(mask, x + alpha * o, 0.0)
        else:
            acc += tl.where(mask, x + alpha * scalar, 0.0)
    total = tl.sum(acc, axis=1)
    if FINAL:
        tl.store(y_ptr + rows64, (total * inv_n).to(y_ptr.dtype.element_ty), mask=row_ok)
    else:
        tl.store(part_ptr + split.to(tl.int64) * M + rows64, total, mask=row_ok)


@triton.jit
def finish_mean_kernel(part_ptr, y_ptr, M, num_splits, inv_n, BLOCK_M: tl.constexpr, BLOCK_S: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    splits = tl.arange(0, BLOCK_S)
    acc = tl.zeros((BLOCK_M, BLOCK_S), dtype=tl.float32)
    for s0 in range(0, num_splits, BLOCK_S):
        s = s0 + splits
        mask = row_ok[:, None] & (s < num_splits)[None, :]
        acc += tl.load(part_ptr + s.to(tl.int64)[None, :] * M + rows[:, None], mask=mask, other=0.0)
    total = tl.sum(acc, axis=1)
    tl.store(y_ptr + rows, (total * inv_n).to(y_ptr.dtype.element_ty), mask=row_ok)


def _pow2(n):
    return triton.next_power_of_2(max(1, int(n)))


def fused_add_mean(input, other, dim=None, alpha=1, keepdim=False, dtype=None, out=None):
    is_tensor = isinstance(other, torch.Tensor)
    shape = tuple(torch.broadcast_shapes(input.shape, other.shape)) if is_tensor else tuple(input.shape)
    nd = len(shape)
    if dim is None:
        reduced = list(range(nd))
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        reduced = sorted({int(d) % nd for d in dims}) if nd else []
    kept = [d for d in range(nd) if d not in reduced]
    out_dtype = dtype if dtype is not None else input.dtype
    if keepdim:
        out_shape = tuple(1 if d in reduced else shape[d] for d in range(nd))
    else:
        out_shape = tuple(shape[d] for d in kept)
    M = 1
    for d in kept:
        M *= shape[d]
    N = 1
    for d in reduced:
        N *= shape[d]
    perm = kept + reduced
    # kept dims first, reduced dims last, as an (M, N) matrix (a view where the layout allows)
    x2 = input.expand(shape).permute(perm).reshape(M, N)
    if is_tensor:
        o2 = other.expand(shape).permute(perm).reshape(M, N)
        scalar = 0.0
    else:
        o2 = x2
        scalar = float(other)
    y = torch.empty((M,), dtype=out_dtype, device=input.device)
    if M > 0:
        inv_n = 1.0 / N if N > 0 else float("nan")
        block_n = min(_pow2(N), TARGET_TILE)
        block_m = min(_pow2(M), max(1, TARGET_TILE // block_n))
        grid_m = triton.cdiv(M, block_m)
        splits = 1
        if grid_m < MAX_PROGRAMS // 4 and N >= 2 * MIN_SPLIT_WORK:
            splits = min(MAX_PROGRAMS // grid_m, N // MIN_SPLIT_WORK)
        cols_per_split = triton.cdiv(N, splits) if N > 0 else 0
        cols_per_split = triton.cdiv(max(cols_per_split, 1), block_n) * block_n
        splits = max(1, triton.cdiv(N, cols_per_split))
        part = torch.empty((splits, M), dtype=torch.float32, device=input.device) if splits > 1 else y
        add_sum_kernel[(grid_m, splits)](
            x2, o2, part, y, M, N, cols_per_split,
            x2.stride(0), x2.stride(1), o2.stride(0), o2.stride(1), float(alpha), scalar, inv_n,
            TENSOR=is_tensor, FINAL=splits == 1, BLOCK_M=block_m, BLOCK_N=block_n, num_warps=8)
        if splits > 1:
            block_s = min(_pow2(splits), 64)
            fin_m = min(_pow2(M), 64)
            finish_mean_kernel[(triton.cdiv(M, fin_m),)](part, y, M, splits, inv_n,
                                                         BLOCK_M=fin_m, BLOCK_S=block_s, num_warps=4)
    result = y.reshape(out_shape)
    if out is not None:
        out.copy_(result)
        return out
    return result
