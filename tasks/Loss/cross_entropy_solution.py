import torch
import triton
import triton.language as tl

TILE = 4096        # logits per loaded tile
MAX_BLOCK_C = 2048  # longest stretch of one row loaded at once
FINISH_BLOCK = 1024


@triton.jit
def ce_rows_kernel(x_ptr, t_ptr, w_ptr, loss_ptr, part_ptr, N, C, ignore_index, num_parts,
                   HAS_W: tl.constexpr, REDUCE: tl.constexpr, F64: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_C: tl.constexpr):
    # One pass over BLOCK_M rows of logits: an online log-sum-exp, then the target logit.
    # REDUCE: write this program's loss total and weight total to part[pid], part[num_parts + pid];
    # otherwise write the per-row losses.
    cty = tl.float64 if F64 else tl.float32
    pid = tl.program_id(0)
    rows = pid.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < N
    cols = tl.arange(0, BLOCK_C)
    x_row = x_ptr + rows[:, None] * C
    m = tl.full((BLOCK_M,), -1.0e30, dtype=cty)
    s = tl.zeros((BLOCK_M,), dtype=cty)
    for c0 in range(0, C, BLOCK_C):
        c = c0 + cols
        mask = row_mask[:, None] & (c < C)[None, :]
        x = tl.load(x_row + c[None, :], mask=mask, other=float("-inf")).to(cty)
        m_new = tl.maximum(m, tl.max(x, axis=1))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new[:, None]), axis=1)
        m = m_new
    lse = m + tl.log(tl.where(row_mask, s, 1.0))

    t = tl.load(t_ptr + rows, mask=row_mask, other=ignore_index)
    valid = row_mask & (t != ignore_index)
    t_safe = tl.where(valid, t, 0)
    x_t = tl.load(x_ptr + rows * C + t_safe, mask=valid, other=0.0).to(cty)
    if HAS_W:
        w = tl.load(w_ptr + t_safe, mask=valid, other=0.0).to(cty)
    else:
        w = tl.where(valid, 1.0, 0.0).to(cty)
    loss = tl.where(valid, w * (lse - x_t), 0.0)
    if REDUCE:
        tl.store(part_ptr + pid, tl.sum(loss, axis=0))
        tl.store(part_ptr + num_parts + pid, tl.sum(w, axis=0))
    else:
        tl.store(loss_ptr + rows, loss.to(loss_ptr.dtype.element_ty), mask=row_mask)


@triton.jit
def ce_finish_kernel(part_ptr, out_ptr, num_parts, MEAN: tl.constexpr, F64: tl.constexpr,
                     BLOCK: tl.constexpr):
    # A single program adds up the per-program totals in a fixed order (deterministic).
    cty = tl.float64 if F64 else tl.float32
    offs = tl.arange(0, BLOCK)
    loss_acc = tl.zeros((BLOCK,), dtype=cty)
    w_acc = tl.zeros((BLOCK,), dtype=cty)
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


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean"):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    x = input.contiguous()
    t = target.contiguous()
    n, c = x.shape
    f64 = x.dtype == torch.float64
    acc_dtype = torch.float64 if f64 else torch.float32
    has_w = weight is not None
    w = weight.contiguous() if has_w else x  # placeholder pointer when there is no weight
    block_c = min(_pow2(c), MAX_BLOCK_C)
    block_m = min(_pow2(n), max(1, TILE // block_c))
    grid = triton.cdiv(n, block_m)
    warps = 8 if block_m * block_c >= 2048 else 4
    if reduction == "none":
        out = torch.empty((n,), device=x.device, dtype=x.dtype)
        ce_rows_kernel[(grid,)](x, t, w, out, out, n, c, ignore_index, grid, HAS_W=has_w, REDUCE=False,
                                F64=f64, BLOCK_M=block_m, BLOCK_C=block_c, num_warps=warps)
        return out
    parts = torch.empty((2 * grid,), device=x.device, dtype=acc_dtype)
    ce_rows_kernel[(grid,)](x, t, w, parts, parts, n, c, ignore_index, grid, HAS_W=has_w, REDUCE=True,
                            F64=f64, BLOCK_M=block_m, BLOCK_C=block_c, num_warps=warps)
    out = torch.empty((), device=x.device, dtype=x.dtype)
    ce_finish_kernel[(1,)](parts, out, grid, MEAN=reduction == "mean", F64=f64,
                           BLOCK=min(FINISH_BLOCK, _pow2(grid)), num_warps=4)
    return out
