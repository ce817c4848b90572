import torch
import triton
import triton.language as tl

BLOCK = 1024       # target positions per step
MAX_PARTS = 1024   # programs (partial sums) of a reduction
FINISH_BLOCK = 1024


@triton.jit
def nll_kernel(x_ptr, t_ptr, w_ptr, out_ptr, P, C, S, ignore_index, per_program, num_parts,
               HAS_W: tl.constexpr, REDUCE: tl.constexpr, BLOCK: tl.constexpr):
    # input is (N, C, S) and target (N, S), both contiguous; position q = n * S + s reads
    # input[n, target[q], s]. Program p covers positions [p * per_program, (p + 1) * per_program).
    # REDUCE: write its float32 loss total to out[p] and weight total to out[num_parts + p];
    # otherwise write the per-position losses.
    pid = tl.program_id(0)
    start = pid.to(tl.int64) * per_program
    end = tl.minimum(start + per_program, P)
    offs = tl.arange(0, BLOCK)
    loss_acc = tl.zeros((BLOCK,), dtype=tl.float32)
    w_acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for q0 in range(start, end, BLOCK):
        q = q0 + offs
        mask = q < end
        t = tl.load(t_ptr + q, mask=mask, other=ignore_index)
        valid = mask & (t != ignore_index)
        c = tl.where(valid, t, 0).to(tl.int64)
        n = q // S
        s = q % S
        x = tl.load(x_ptr + (n * C + c) * S + s, mask=valid, other=0.0).to(tl.float32)
        if HAS_W:
            w = tl.load(w_ptr + c, mask=valid, other=0.0).to(tl.float32)
        else:
            w = tl.where(valid, 1.0, 0.0)
        loss = tl.where(valid, -w * x, 0.0)
        if REDUCE:
            loss_acc += loss
            w_acc += w
        else:
            tl.store(out_ptr + q, loss.to(out_ptr.dtype.element_ty), mask=mask)
    if REDUCE:
        tl.store(out_ptr + pid, tl.sum(loss_acc, axis=0))
        tl.store(out_ptr + num_parts + pid, tl.sum(w_acc, axis=0))


@triton.jit
def finish_kernel(parts_ptr, out_ptr, num_parts, MEAN: tl.constexpr, BLOCK: tl.constexpr):
    # one program adds the partial totals in a fixed order (deterministic)
    offs = tl.arange(0, BLOCK)
    loss_acc = tl.zeros((BLOCK,), dtype=tl.float32)
    w_acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for p0 in range(0, num_parts, BLOCK):
        p = p0 + offs
        mask = p < num_parts
        loss_acc += tl.load(parts_ptr + p, mask=mask, other=0.0)
        w_acc += tl.load(parts_ptr + num_parts + p, mask=mask, other=0.0)
    total = tl.sum(loss_acc, axis=0)
    if MEAN:
        total = total / tl.sum(w_acc, axis=0)
    tl.store(out_ptr, total.to(out_ptr.dtype.element_ty))


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    x = input.contiguous()
    t = target.contiguous()
    if x.dim() == 1:  # a single sample: (C,) with a 0-dim target
        x = x.unsqueeze(0)
        t = t.reshape(1)
    n, c = x.shape[0], x.shape[1]
    s = 1
    for d in x.shape[2:]:
        s *= d
    p = n * s
    has_w = weight is not None
    w = weight.contiguous() if has_w else x  # placeholder pointer when there is no weight
    if reduction == "none":
        out = torch.empty(target.shape, device=x.device, dtype=x.dtype)
        nll_kernel[(max(1, triton.cdiv(p, BLOCK)),)](x, t, w, out, p, c, s, ignore_index, BLOCK, 1,
                                                     HAS_W=has_w, REDUCE=False, BLOCK=BLOCK, num_warps=4)
        return out
    programs = max(1, min(MAX_PARTS, triton.cdiv(p, BLOCK)))
    per = triton.cdiv(triton.cdiv(p, programs), BLOCK) * BLOCK
    programs = max(1, triton.cdiv(p, per))
    parts = torch.empty((2 * programs,), device=x.device, dtype=torch.float32)
    nll_kernel[(programs,)](x, t, w, parts, p, c, s, ignore_index, per, programs,
                            HAS_W=has_w, REDUCE=True, BLOCK=BLOCK, num_warps=4)
    out = torch.empty((), device=x.device, dtype=x.dtype)
    finish_kernel[(1,)](parts, out, programs, MEAN=reduction == "mean",
                        BLOCK=min(FINISH_BLOCK, triton.next_power_of_2(programs)), num_warps=4)
    return out
