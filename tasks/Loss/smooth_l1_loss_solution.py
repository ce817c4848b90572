import torch
import triton
import triton.language as tl

BLOCK = 2048       # elements per step
MAX_PARTS = 1024   # programs (partial sums) of a reduction
FINISH_BLOCK = 1024


@triton.jit
def smooth_l1_kernel(x_ptr, y_ptr, out_ptr, N, per_program, beta,
                     REDUCE: tl.constexpr, BLOCK: tl.constexpr):
    # Program p covers elements [p * per_program, (p + 1) * per_program). REDUCE: write the
    # float32 sum of its losses to out[p]; otherwise write the losses elementwise.
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * per_program
    end = tl.minimum(start + per_program, N)
    offs = tl.arange(0, BLOCK)
    safe_beta = tl.where(beta > 0.0, beta, 1.0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(start, end, BLOCK):
        e = s + offs
        mask = e < end
        x = tl.load(x_ptr + e, mask=mask, other=0.0).to(tl.float32)
        y = tl.load(y_ptr + e, mask=mask, other=0.0).to(tl.float32)
        ad = tl.abs(x - y)
        loss = tl.where(ad < beta, 0.5 * ad * ad / safe_beta, ad - 0.5 * beta)
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


def smooth_l1_loss(input, target, beta=1.0, reduction="mean"):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    if beta < 0:
        raise ValueError("beta must be >= 0")
    x = input.contiguous()
    y = target.contiguous()
    n = x.numel()
    beta = float(beta)
    if reduction == "none":
        out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        smooth_l1_kernel[(max(1, triton.cdiv(n, BLOCK)),)](x, y, out, n, BLOCK, beta, REDUCE=False,
                                                           BLOCK=BLOCK, num_warps=8)
        return out
    programs = max(1, min(MAX_PARTS, triton.cdiv(n, BLOCK)))
    per = triton.cdiv(triton.cdiv(n, programs), BLOCK) * BLOCK
    programs = max(1, triton.cdiv(n, per))
    parts = torch.empty((programs,), device=x.device, dtype=torch.float32)
    smooth_l1_kernel[(programs,)](x, y, parts, n, per, beta, REDUCE=True, BLOCK=BLOCK, num_warps=8)
    out = torch.empty((), device=x.device, dtype=x.dtype)
    scale = (1.0 / n if n else float("nan")) if reduction == "mean" else 1.0
    finish_kernel[(1,)](parts, out, programs, scale,
                        BLOCK=min(FINISH_BLOCK, triton.next_power_of_2(programs)), num_warps=4)
    return out
