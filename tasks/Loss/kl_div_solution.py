import torch
import triton
import triton.language as tl

BLOCK = 2048       # elements per step
MAX_PARTS = 1024   # programs (partial sums) of a reduction
FINISH_BLOCK = 1024


@triton.jit
def kl_kernel(x_ptr, t_ptr, out_ptr, N, per_program,
              LOG_TARGET: tl.constexpr, REDUCE: tl.constexpr, BLOCK: tl.constexpr):
    # Program p covers elements [p * per_program, (p + 1) * per_program). REDUCE: write the
    # float32 sum of its terms to out[p]; otherwise write the terms elementwise.
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * per_program
    end = tl.minimum(start + per_program, N)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(start, end, BLOCK):
        e = s + offs
        mask = e < end
        x = tl.load(x_ptr + e, mask=mask, other=0.0).to(tl.float32)
        t = tl.load(t_ptr + e, mask=mask, other=0.0).to(tl.float32)
        if LOG_TARGET:
            term = tl.exp(t) * (t - x)
        else:
            # t * log(t) is 0 at t == 0 (the limit), whatever x holds
            safe_t = tl.where(t > 0.0, t, 1.0)
            term = tl.where(t > 0.0, t * (tl.log(safe_t) - x), 0.0)
        if REDUCE:
            acc += tl.where(mask, term, 0.0)
        else:
            tl.store(out_ptr + e, term.to(out_ptr.dtype.element_ty), mask=mask)
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


def kl_div(input, target, reduction="batchmean", log_target=False):
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"reduction must be 'none', 'mean', 'sum' or 'batchmean', got {reduction!r}")
    x = input.contiguous()
    t = target.contiguous()
    n = x.numel()
    log_target = bool(log_target)
    if reduction == "none":
        out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        kl_kernel[(max(1, triton.cdiv(n, BLOCK)),)](x, t, out, n, BLOCK, LOG_TARGET=log_target, REDUCE=False,
                                                    BLOCK=BLOCK, num_warps=8)
        return out
    programs = max(1, min(MAX_PARTS, triton.cdiv(n, BLOCK)))
    per = triton.cdiv(triton.cdiv(n, programs), BLOCK) * BLOCK
    programs = max(1, triton.cdiv(n, per))
    parts = torch.empty((programs,), device=x.device, dtype=torch.float32)
    kl_kernel[(programs,)](x, t, parts, n, per, LOG_TARGET=log_target, REDUCE=True, BLOCK=BLOCK, num_warps=8)
    out = torch.empty((), device=x.device, dtype=x.dtype)
    if reduction == "mean":
        divisor = n
    elif reduction == "batchmean":
        divisor = x.shape[0] if x.dim() > 0 else 1
    else:
        divisor = 1
    scale = 1.0 / divisor if divisor else float("nan")
    finish_kernel[(1,)](parts, out, programs, scale,
                        BLOCK=min(FINISH_BLOCK, triton.next_power_of_2(programs)), num_warps=4)
    return out
