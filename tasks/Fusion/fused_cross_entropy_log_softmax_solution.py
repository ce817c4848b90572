import torch
import triton
import triton.language as tl

TILE = 4096         # logits per loaded tile
MAX_BLOCK_C = 2048  # longest stretch of one row loaded at once
FINISH_BLOCK = 1024


@triton.jit
def ce_rows_kernel(x_ptr, t_ptr, w_ptr, loss_ptr, part_ptr, N, C, ignore_index, smoothing, num_parts,
                   HAS_W: tl.constexpr, REDUCE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_C: tl.constexpr):
    # One pass over BLOCK_M rows: online log-sum-exp, sum_c w_c * x_c and sum_c w_c for the smoothing
    # term, then the target logit. REDUCE: write this program's loss total and weight total to
    # part[pid] and part[num_parts + pid]; otherwise the per-row losses.
    pid = tl.program_id(0)
    rows = pid.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < N
    cols = tl.arange(0, BLOCK_C)
    x_row = x_ptr + rows[:, None] * C
    m = tl.full((BLOCK_M,), -1.0e30, dtype=tl.float32)
    s = tl.zeros((BLOCK_M,), dtype=tl.float32)
    wx = tl.zeros((BLOCK_M, BLOCK_C), dtype=tl.float32)
    wsum = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for c0 in range(0, C, BLOCK_C):
        c = c0 + cols
        col_ok = c < C
        mask = row_ok[:, None] & col_ok[None, :]
        x = tl.load(x_row + c[None, :], mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=1))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new[:, None]), axis=1)
        m = m_new
        if HAS_W:
            wc = tl.load(w_ptr + c, mask=col_ok, other=0.0).to(tl.float32)
        else:
            wc = tl.where(col_ok, 1.0, 0.0)
        wx += tl.where(mask, x * wc[None, :], 0.0)
        wsum += wc
    lse = m + tl.log(tl.where(row_ok, s, 1.0))
    smooth = lse * tl.sum(wsum, axis=0) - tl.sum(wx, axis=1)   # sum_c w_c * (lse - x_c)

    t = tl.load(t_ptr + rows, mask=row_ok, other=ignore_index)
    valid = row_ok & (t != ignore_index)
    t_safe = tl.where(valid, t, 0)
    x_t = tl.load(x_ptr + rows * C + t_safe, mask=valid, other=0.0).to(tl.float32)
    if HAS_W:
        w_t = tl.load(w_ptr + t_safe, mask=valid, other=0.0).to(tl.float32)
    else:
        w_t = tl.where(valid, 1.0, 0.0)
    loss = (1.0 - smoothing) * w_t * (lse - x_t) + (smoothing / C) * smooth
    loss = tl.where(valid, loss, 0.0)
    if REDUCE:
        tl.store(part_ptr + pid, tl.sum(loss, axis=0))
        tl.store(part_ptr + num_parts + pid, tl.sum(tl.where(valid, w_t, 0.0), axis=0))
    else:
        tl.store(loss_ptr + rows, loss.to(loss_ptr.dtype.element_ty), mask=row_ok)


@triton.jit
def ce_finish_kernel(part_ptr, out_ptr, num_parts, MEAN: tl.constexpr, BLOCK: tl.constexpr):
    # A single program adds up the per-program totals in a fixed order (deterministic).
    offs = tl.arange(0, BLOCK)
    loss_acc = tl.zeros((BLOCK,), dtype=tl.float32)
    w_acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for p0 in range(0, num_parts, BLOCK):
        p = p0 + offs
        mask = p < num_parts
        loss_acc += tl.load(part_ptr + p, mask=mask, other=0.0)
        w_acc += tl.load(part_ptr + num_parts + p, mask=mask, other=0.0)
    total = tl.sum(loss_acc, axis=0)
    if MEAN:
        total = total / tl.sum(w_acc, axis=0)
    tl.store(out_ptr, total.to(out_ptr.dtype.element_ty))


def _pow2(n):
    return triton.next_power_of_2(max(1, int(n)))


def fused_cross_entropy_log_softmax(input: torch.Tensor, target: torch.Tensor, dim: int = 1,
                                    weight: torch.Tensor = None, ignore_index: int = -100,
                                    reduction: str = "mean", label_smoothing: float = 0.0):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if input.dim() != 2 or dim not in (1, -1):
        raise ValueError("expected (N, C) logits with the classes along dim 1 (or -1)")
    x = input.contiguous()
    t = target.contiguous()
    n, c = x.shape
    has_w = weight is not None
    w = weight.contiguous() if has_w else x  # placeholder pointer when there is no weight
    block_c = min(_pow2(c), MAX_BLOCK_C)
    block_m = min(_pow2(n), max(1, TILE // block_c))
    grid = triton.cdiv(n, block_m)
    warps = 8 if block_m * block_c >= 2048 else 4
    smoothing = float(label_smoothing)
    if reduction == "none":
        out = torch.empty((n,), device=x.device, dtype=x.dtype)
        if n > 0:
            ce_rows_kernel[(grid,)](x, t, w, out, out, n, c, ignore_index, smoothing, grid, HAS_W=has_w,
                                    REDUCE=False, BLOCK_M=block_m, BLOCK_C=block_c, num_warps=warps)
        return out
    parts = torch.zeros((2 * max(grid, 1),), device=x.device, dtype=torch.float32)
    if n > 0:
        ce_rows_kernel[(grid,)](x, t, w, parts, parts, n, c, ignore_index, smoothing, grid, HAS_W=has_w,
                                REDUCE=True, BLOCK_M=block_m, BLOCK_C=block_c, num_warps=warps)
    out = torch.empty((), device=x.device, dtype=x.dtype)
    ce_finish_kernel[(1,)](parts, out, max(grid, 1), MEAN=reduction == "mean",
                           BLOCK=min(FINISH_BLOCK, _pow2(grid)), num_warps=4)
    return out
