import torch
import triton
import triton.language as tl

BLOCK = 2048       # elements per step
MAX_PARTS = 1024   # programs (partial sums) of a reduction
FINISH_BLOCK = 1024


@triton.jit
def mse_kernel(x_ptr, y_ptr, out_ptr, N, per_program, REDUCE: tl.constexpr, BLOCK: tl.constexpr):
    # Program p covers elements [p * per_program, (p + 1) * per_program). REDUCE: write the
    # float32 sum of its squared differences to out[p]; otherwise write them elementwise.
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * per_program
    end = tl.minimum(start + per_program, N)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(start, end, BLOCK):
        e = s + offs
        mask = e < end
        x = tl.load(x_ptr + e, mask=mask, other=0.0).to(tl.float32)
        y = tl.load(y_ptr + e, mask=mask, other=0.0).to(tl.float32)
        d = x - y
        if REDUCE:
            acc += d * d
        else:
            tl.store(out_ptr + e, (d * d).to(out_ptr.dtype.element_ty), mask=mask)
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


def mse_loss(input, target, reduction="mean"):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    x = input.contiguous()
    y = target.contiguous()
    n = x.numel()
    if reduction == "none":
        out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        mse_kernel[(max(1, triton.cdiv(n, BLOCK)),)](x, y, out, n, BLOCK, REDUCE=False, BLOCK=BLOCK,
                                                     num_warps=8)
        return out
    programs = max(1, min(MAX_PARTS, triton.cdiv(n, BLOCK)))
    per = triton.cdiv(triton.cdiv(n, programs), BLOCK) * BLOCK
    programs = max(1, triton.cdiv(n, per))
    parts = torch.empty((programs,), device=x.device, dtype=torch.float32)
    mse_kernel[(programs,)](x, y, parts, n, per, REDUCE=True, BLOCK=BLOCK, num_warps=8)
    out = torch.empty((), device=x.device, dtype=x.dtype)
    scale = (1.0 / n if n else float("nan")) if reduction == "mean" else 1.0
    finish_kernel[(1,)](parts, out, programs, scale,
                        BLOCK=min(FINISH_BLOCK, triton.next_power_of_2(programs)), num_warps=4)
    return out
