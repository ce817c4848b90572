import torch
import triton
import triton.language as tl

TILE = 4096
MAX_BLOCK_D = 512
FINISH_BLOCK = 1024
NORM_EPS = tl.constexpr(1e-12)
MAG_EPS = tl.constexpr(1e-12)


@triton.jit
def cel_rows_kernel(a_ptr, b_ptr, t_ptr, loss_ptr, part_ptr, N, D, margin,
                    REDUCE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr):
    # One pass over BLOCK_M rows: dot product and squared norms, then the row losses.
    # REDUCE: write this program's loss total to part[pid]; otherwise the per-row losses.
    pid = tl.program_id(0)
    rows = pid.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < N
    cols = tl.arange(0, BLOCK_D)
    dot = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    sa = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    sb = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        d = d0 + cols
        mask = row_ok[:, None] & (d < D)[None, :]
        offs = rows[:, None] * D + d[None, :]
        a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        dot += a * b
        sa += a * a
        sb += b * b
    dot_r = tl.sum(dot, axis=1)
    sa_r = tl.sum(sa, axis=1)
    sb_r = tl.sum(sb, axis=1)
    # normalize: divide by max(norm, 1e-12); the normalized rows have these dot and squared norms
    na = tl.maximum(tl.sqrt(sa_r), NORM_EPS)
    nb = tl.maximum(tl.sqrt(sb_r), NORM_EPS)
    dot_n = dot_r / (na * nb)
    mag_a = sa_r / (na * na) + MAG_EPS
    mag_b = sb_r / (nb * nb) + MAG_EPS
    cos = dot_n / tl.sqrt(mag_a * mag_b)
    t = tl.load(t_ptr + rows, mask=row_ok, other=0)
    loss = tl.where(t == 1, 1.0 - cos, tl.where(t == -1, tl.maximum(cos - margin, 0.0), 0.0))
    loss = tl.where(row_ok, loss, 0.0)
    if REDUCE:
        tl.store(part_ptr + pid, tl.sum(loss, axis=0))
    else:
        tl.store(loss_ptr + rows, loss.to(loss_ptr.dtype.element_ty), mask=row_ok)


@triton.jit
def finish_kernel(part_ptr, out_ptr, num_parts, scale, BLOCK: tl.constexpr):
    # A single program adds up the per-program totals in a fixed order (deterministic).
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for p0 in range(0, num_parts, BLOCK):
        p = p0 + offs
        acc += tl.load(part_ptr + p, mask=p < num_parts, other=0.0)
    tl.store(out_ptr, (tl.sum(acc, axis=0) * scale).to(out_ptr.dtype.element_ty))


def _pow2(n):
    return triton.next_power_of_2(max(1, int(n)))


def fused_cosine_embedding_loss_with_normalization(input1, input2, target, margin=0, reduction="mean"):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if input1.dim() != 2 or tuple(input1.shape) != tuple(input2.shape):
        raise ValueError("input1 and input2 must both have shape (N, D)")
    a = input1.contiguous()
    b = input2.contiguous()
    t = target.contiguous()
    n, d = a.shape
    block_d = min(_pow2(d), MAX_BLOCK_D)
    block_m = min(_pow2(n), max(1, TILE // block_d))
    grid = triton.cdiv(n, block_m)
    warps = 8 if block_m * block_d >= 4096 else 4
    if reduction == "none":
        out = torch.empty((n,), device=a.device, dtype=a.dtype)
        if n > 0:
            cel_rows_kernel[(grid,)](a, b, t, out, out, n, d, float(margin), REDUCE=False,
                                     BLOCK_M=block_m, BLOCK_D=block_d, num_warps=warps)
        return out
    out = torch.empty((), device=a.device, dtype=a.dtype)
    parts = torch.empty((max(grid, 1),), device=a.device, dtype=torch.float32)
    if n > 0:
        cel_rows_kernel[(grid,)](a, b, t, parts, parts, n, d, float(margin), REDUCE=True,
                                 BLOCK_M=block_m, BLOCK_D=block_d, num_warps=warps)
    scale = (1.0 / n if n > 0 else float("nan")) if reduction == "mean" else 1.0
    finish_kernel[(1,)](parts, out, grid, scale, BLOCK=min(FINISH_BLOCK, _pow2(grid)), num_warps=4)
    return out
