import torch
import triton
import triton.language as tl

BLOCK = 2048       # elements per step
MAX_PARTS = 1024   # programs (partial sums) of a reduction
FINISH_BLOCK = 1024


@triton.jit
def bce_kernel(x_ptr, y_ptr, w_ptr, out_ptr, N, W_PERIOD, per_program,
               HAS_W: tl.constexpr, REDUCE: tl.constexpr, BLOCK: tl.constexpr):
    # Program p covers elements [p * per_program, (p + 1) * per_program). The weight of element e
    # is w[e % W_PERIOD] (a weight over the trailing dims repeats with that period). REDUCE: write
    # the float32 sum of its losses to out[p]; otherwise write the losses elementwise.
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * per_program
    end = tl.minimum(start + per_program, N)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(start, end, BLOCK):
        e = s + offs
        mask = e < end
        x = tl.load(x_ptr + e, mask=mask, other=0.5).to(tl.float32)
        y = tl.load(y_ptr + e, mask=mask, other=0.0).to(tl.float32)
        log_x = tl.maximum(tl.log(x), -100.0)
        log_1mx = tl.maximum(tl.log(1.0 - x), -100.0)
        loss = -(y * log_x + (1.0 - y) * log_1mx)
        if HAS_W:
            loss = loss * tl.load(w_ptr + e % W_PERIOD, mask=mask, other=0.0).to(tl.float32)
        if REDUCE:
            acc += tl.where(mask, loss, 0.0)
        else:
            tl.store(out_ptr + e, loss.to(out_ptr.dtype.element_ty), mask=mask)
    if REDUCE:
        tl.store(out_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def finish_kernel(parts_ptr, out_ptr, num_parts, scale, BLOCK: tl.constexpr):
    # one program adds the partial sums in a fixed order (deterministic) and scales the total
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for p0 in range(0, num_parts, BLOCK):
        p = p0 + offs
        acc += tl.load(parts_ptr + p, mask=p < num_parts, other=0.0)
    tl.store(out_ptr, (tl.sum(acc, axis=0) * scale).to(out_ptr.dtype.element_ty))


def _weight(weight, shape, n):
    """The weight as a flat tensor and its period: a weight over the trailing dims is used as is,
    any other broadcast is materialized to the full shape."""
    w = weight
    while w.dim() > 0 and w.shape[0] == 1:
        w = w.squeeze(0)
    if w.dim() <= len(shape) and tuple(w.shape) == tuple(shape[len(shape) - w.dim():]):
        w = w.contiguous()
        return w, max(1, w.numel())
    return weight.expand(*shape).contiguous(), max(1, n)


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    x = input.contiguous()
    y = target.contiguous()
    n = x.numel()
    has_w = weight is not None
    w, period = _weight(weight, tuple(x.shape), n) if has_w else (x, 1)
    if reduction == "none":
        out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        bce_kernel[(max(1, triton.cdiv(n, BLOCK)),)](x, y, w, out, n, period, BLOCK, HAS_W=has_w,
                                                     REDUCE=False, BLOCK=BLOCK, num_warps=8)
        return out
    programs = max(1, min(MAX_PARTS, triton.cdiv(n, BLOCK)))
    per = triton.cdiv(triton.cdiv(n, programs), BLOCK) * BLOCK
    programs = max(1, triton.cdiv(n, per))
    parts = torch.empty((programs,), device=x.device, dtype=torch.float32)
    bce_kernel[(programs,)](x, y, w, parts, n, period, per, HAS_W=has_w, REDUCE=True, BLOCK=BLOCK,
                            num_warps=8)
    out = torch.empty((), device=x.device, dtype=x.dtype)
    scale = (1.0 / n if n else float("nan")) if reduction == "mean" else 1.0
    finish_kernel[(1,)](parts, out, programs, scale,
                        BLOCK=min(FINISH_BLOCK, triton.next_power_of_2(programs)), num_warps=4)
    return out
