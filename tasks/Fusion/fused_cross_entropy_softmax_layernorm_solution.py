import torch
import triton
import triton.language as tl

TILE = 4096         # logits per loaded tile
MAX_BLOCK_C = 4096  # longest stretch of one row loaded at once
FINISH_BLOCK = 1024


@triton.jit
def ce_softmax_ln_kernel(x_ptr, t_ptr, w_ptr, y_ptr, loss_ptr, part_ptr, N, C, ignore_index, smoothing,
                         eps, HAS_W: tl.constexpr, REDUCE: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_C: tl.constexpr):
    # BLOCK_M rows per program. Pass 1: online max and sum of exponentials, sum_c w_c * x_c and
    # sum_c w_c (smoothing term). Pass 2: moments of p - 1/C (shifted by the exact mean 1/C: no
    # cancellation). Pass 3: write the layer-normalized probabilities.
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < N
    cols = tl.arange(0, BLOCK_C)
    x_rows = x_ptr + rows[:, None] * C
    y_rows = y_ptr + rows[:, None] * C
    m = tl.full((BLOCK_M,), -1.0e30, dtype=tl.float32)
    s = tl.zeros((BLOCK_M,), dtype=tl.float32)
    wx = tl.zeros((BLOCK_M, BLOCK_C), dtype=tl.float32)
    wsum = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for c0 in range(0, C, BLOCK_C):
        c = c0 + cols
        col_ok = c < C
        mask = row_ok[:, None] & col_ok[None, :]
        x = tl.load(x_rows + c[None, :], mask=mask, other=float("-inf")).to(tl.float32)
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

    t = tl.load(t_ptr + rows, mask=row_ok, other=ignore_index)
    valid = row_ok & (t != ignore_index)
    t_safe = tl.where(valid, t, 0)
    x_t = tl.load(x_ptr + rows * C + t_safe, mask=valid, other=0.0).to(tl.float32)
    if HAS_W:
        w_t = tl.load(w_ptr + t_safe, mask=valid, other=0.0).to(tl.float32)
    else:
        w_t = tl.where(valid, 1.0, 0.0)
    smooth = lse * tl.sum(wsum, axis=0) - tl.sum(wx, axis=1)   # sum_c w_c * (lse - x_c)
    loss = (1.0 - smoothing) * w_t * (lse - x_t) + (smoothing / C) * smooth
    loss = tl.where(valid, loss, 0.0)
    if REDUCE:
        tl.store(part_ptr + rows, loss, mask=row_ok)
        tl.store(part_ptr + N + rows, tl.where(valid, w_t, 0.0), mask=row_ok)
    else:
        tl.store(loss_ptr + rows, loss.to(loss_ptr.dtype.element_ty), mask=row_ok)

    shift = 1.0 / C
    d1 = tl.zeros((BLOCK_M, BLOCK_C), dtype=tl.float32)
    d2 = tl.zeros((BLOCK_M, BLOCK_C), dtype=tl.float32)
    for c0 in range(0, C, BLOCK_C):
        c = c0 + cols
        mask = row_ok[:, None] & (c < C)[None, :]
        x = tl.load(x_rows + c[None, :], mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, tl.exp(x - lse[:, None]) - shift, 0.0)
        d1 += d
        d2 += d * d
    mean_d = tl.sum(d1, axis=1) / C
    var = tl.maximum(tl.sum(d2, axis=1) / C - mean_d * mean_d, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    for c0 in range(0, C, BLOCK_C):
        c = c0 + cols
        mask = row_ok[:, None] & (c < C)[None, :]
        x = tl.load(x_rows + c[None, :], mask=mask, other=0.0).to(tl.float32)
        y = (tl.exp(x - lse[:, None]) - shift - mean_d[:, None]) * rstd[:, None]
        tl.store(y_rows + c[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def ce_finish_kernel(part_ptr, out_ptr, N, MEAN: tl.constexpr, BLOCK: tl.constexpr):
    # A single program adds up the row losses and weights in a fixed order (deterministic).
    offs = tl.arange(0, BLOCK)
    loss_acc = tl.zeros((BLOCK,), dtype=tl.float32)
    w_acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for p0 in range(0, N, BLOCK):
        p = p0 + offs
        mask = p < N
        loss_acc += tl.load(part_ptr + p, mask=mask, other=0.0)
        w_acc += tl.load(part_ptr + N + p, mask=mask, other=0.0)
    total = tl.sum(loss_acc, axis=0)
    if MEAN:
        total = total / tl.sum(w_acc, axis=0)
    tl.store(out_ptr, total.to(out_ptr.dtype.element_ty))


def _pow2(n):
    return triton.next_power_of_2(max(1, int(n)))


def fused_cross_entropy_softmax_layernorm(logits, targets, normalized_shape, weight=None, ignore_index=-100,
                                          reduction="mean", label_smoothing=0.0, eps=1e-5, *, out=None):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if logits.dim() != 2:
        raise ValueError("expected (N, C) logits")
    n, c = logits.shape
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if shape != (c,):
        raise ValueError(f"normalized_shape must be ({c},), got {normalized_shape!r}")
    x = logits.contiguous()
    t = targets.contiguous()
    has_w = weight is not None
    w = weight.contiguous() if has_w else x  # placeholder pointer when there is no weight
    y = torch.empty((n, c), device=x.device, dtype=x.dtype)
    block_c = min(_pow2(c), MAX_BLOCK_C)
    block_m = min(_pow2(n), max(1, TILE // block_c))
    grid = triton.cdiv(n, block_m)
    warps = 16 if block_m * block_c >= 4096 else (8 if block_m * block_c >= 1024 else 4)
    reduce = reduction != "none"
    if reduce:
        loss = torch.empty((), device=x.device, dtype=x.dtype)
        parts = torch.empty((2 * max(n, 1),), device=x.device, dtype=torch.float32)
    else:
        loss = torch.empty((n,), device=x.device, dtype=x.dtype)
        parts = loss
    if n > 0:
        ce_softmax_ln_kernel[(grid,)](x, t, w, y, loss, parts, n, c, ignore_index, float(label_smoothing),
                                      float(eps), HAS_W=has_w, REDUCE=reduce, BLOCK_M=block_m, BLOCK_C=block_c,
                                      num_warps=warps)
    if reduce:
        ce_finish_kernel[(1,)](parts, loss, n, MEAN=reduction == "mean", BLOCK=min(FINISH_BLOCK, _pow2(n)),
                               num_warps=4)
    if out is not None:
        out.copy_(y)
        y = out
    return loss, y
