import math

import torch
import triton
import triton.language as tl

TILE = 4096             # elements per loaded tile
TARGET_PROGRAMS = 1024  # split long reductions until about this many programs run
MERGE_BLOCK = 1024      # statistics merged per step by the final program


@triton.jit
def _stats(v, valid):
    # (count, mean, M2) of the valid entries of the vector v
    cnt = tl.sum(valid.to(tl.float32), axis=0)
    mean = tl.sum(tl.where(valid, v, 0.0), axis=0) / tl.maximum(cnt, 1.0)
    d = tl.where(valid, v - mean, 0.0)
    return cnt, mean, tl.sum(d * d, axis=0)


@triton.jit
def sum_kernel(x_ptr, y_ptr, part_ptr, cnt_ptr, mean_ptr, m2_ptr, R, I, OI, stride_o, stride_r, stride_i, chunk,
               i_blocks, ROUND: tl.constexpr, STATS: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_I: tl.constexpr):
    # The input is viewed as (O, R, I) with the given strides and summed over R, giving O*I sums. Program
    # (o, i-block, split) sums rows [split * chunk, (split + 1) * chunk). With STATS (one split) it reduces
    # its BLOCK_I sums straight to (count, mean, M2); otherwise it writes the partial sums.
    pid = tl.program_id(0)
    s = tl.program_id(1)
    o = pid // i_blocks
    ib = pid % i_blocks
    i = ib * BLOCK_I + tl.arange(0, BLOCK_I)
    i_ok = i < I
    r_start = s * chunk
    r_end = tl.minimum(r_start + chunk, R)
    base = x_ptr + o.to(tl.int64) * stride_o + i.to(tl.int64)[None, :] * stride_i
    acc = tl.zeros((BLOCK_R, BLOCK_I), dtype=tl.float32)
    for r0 in range(r_start, r_end, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        m = (r < r_end)[:, None] & i_ok[None, :]
        x = tl.load(base + r.to(tl.int64)[:, None] * stride_r, mask=m, other=0.0)
        if ROUND:
            x = x.to(y_ptr.dtype.element_ty)  # the input converted to the requested dtype first
        acc += x.to(tl.float32)
    sums = tl.sum(acc, axis=0)
    if STATS:
        cnt, mean, m2 = _stats(sums, i_ok)
        tl.store(cnt_ptr + pid, cnt)
        tl.store(mean_ptr + pid, mean)
        tl.store(m2_ptr + pid, m2)
    else:
        tl.store(part_ptr + s.to(tl.int64) * OI + o.to(tl.int64) * I + i, sums, mask=i_ok)


@triton.jit
def merge_splits_kernel(part_ptr, cnt_ptr, mean_ptr, m2_ptr, OI, SPLIT, BLOCK: tl.constexpr):
    # adds the SPLIT partial sums of BLOCK consecutive outputs, then reduces them to (count, mean, M2)
    pid = tl.program_id(0)
    k = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    k_ok = k < OI
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, SPLIT):
        total += tl.load(part_ptr + s * OI + k, mask=k_ok, other=0.0)
    cnt, mean, m2 = _stats(total, k_ok)
    tl.store(cnt_ptr + pid, cnt)
    tl.store(mean_ptr + pid, mean)
    tl.store(m2_ptr + pid, m2)


@triton.jit
def std_final_kernel(cnt_ptr, mean_ptr, m2_ptr, y_ptr, P, correction, BLOCK: tl.constexpr):
    # one program merges the P (count, mean, M2) triples with Chan's update and writes the deviation
    cnt = 0.0
    mean = 0.0
    m2 = 0.0
    for p0 in range(0, P, BLOCK):
        p = p0 + tl.arange(0, BLOCK)
        ok = p < P
        c = tl.load(cnt_ptr + p, mask=ok, other=0.0)
        mu = tl.load(mean_ptr + p, mask=ok, other=0.0)
        q = tl.load(m2_ptr + p, mask=ok, other=0.0)
        t_cnt = tl.sum(c, axis=0)
        t_mean = tl.sum(c * mu, axis=0) / tl.maximum(t_cnt, 1.0)
        dev = tl.where(ok, mu - t_mean, 0.0)
        t_m2 = tl.sum(q + c * dev * dev, axis=0)
        total = tl.maximum(cnt + t_cnt, 1.0)
        delta = t_mean - mean
        mean = mean + delta * (t_cnt / total)
        m2 = m2 + t_m2 + delta * delta * (cnt * t_cnt / total)
        cnt = cnt + t_cnt
    std = tl.sqrt(m2 / tl.maximum(cnt - correction, 0.0))
    tl.store(y_ptr, std.to(y_ptr.dtype.element_ty))


def _plan(x, dim):
    """View x as (O, R, I) summed over R: the tensor to read, O, R, I and the kept dims."""
    ndim = x.dim()
    if dim is None:
        reduced = list(range(ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        reduced = sorted({d % max(ndim, 1) for d in dims}) if ndim else []
    shape = list(x.shape)
    kept = [d for d in range(ndim) if d not in reduced]
    if not reduced:
        return x.contiguous(), math.prod(shape), 1, 1, kept
    if reduced == list(range(reduced[0], reduced[-1] + 1)):
        a, b = reduced[0], reduced[-1]
        return x.contiguous(), math.prod(shape[:a]), math.prod(shape[a:b + 1]), math.prod(shape[b + 1:]), kept
    xt = x.permute(kept + reduced).contiguous()
    return xt, math.prod(shape[d] for d in kept), math.prod(shape[d] for d in reduced), 1, kept


def fused_sum_std(input, dim=None, keepdim=False, dtype=None, correction=1, out=None):
    out_dtype = input.dtype if dtype is None else dtype
    xv, O, R, I, kept = _plan(input, dim)
    out_shape = (1,) * input.dim() if keepdim else ()
    y = torch.empty(out_shape, dtype=out_dtype, device=input.device)
    device = input.device
    OI = O * I
    correction = float(1 if correction is None else correction)
    # strides of the (O, R, I) view; a contiguous (rows, R) input is read as (1, R, rows)
    stride_o, stride_r, stride_i = R * I, I, 1
    if I == 1:
        O, I, stride_o, stride_r, stride_i = 1, O, 0, 1, R
        block_r = min(TILE, triton.next_power_of_2(max(R, 1)))
        block_i = max(1, min(TILE // block_r, triton.next_power_of_2(I)))
    else:
        block_i = min(128, triton.next_power_of_2(I))
        block_r = max(1, min(TILE // block_i, triton.next_power_of_2(max(R, 1))))
    i_blocks = triton.cdiv(I, block_i)
    r_blocks = max(1, triton.cdiv(R, block_r))
    split = max(1, min(r_blocks, triton.cdiv(TARGET_PROGRAMS, O * i_blocks)))
    chunk = triton.cdiv(r_blocks, split) * block_r
    split = max(1, triton.cdiv(R, chunk))
    round_first = dtype is not None and dtype != input.dtype
    warps = 8 if block_r * block_i >= 4096 else 4
    if split == 1:
        parts = O * i_blocks
        cnt = torch.empty(parts, dtype=torch.float32, device=device)
        mean = torch.empty_like(cnt)
        m2 = torch.empty_like(cnt)
        sum_kernel[(parts, 1)](xv, y, cnt, cnt, mean, m2, R, I, OI, stride_o, stride_r, stride_i, chunk, i_blocks,
                               ROUND=round_first, STATS=True, BLOCK_R=block_r, BLOCK_I=block_i, num_warps=warps)
    else:
        part = torch.empty((split, OI), dtype=torch.float32, device=device)
        sum_kernel[(O * i_blocks, split)](xv, y, part, part, part, part, R, I, OI, stride_o, stride_r, stride_i,
                                          chunk, i_blocks, ROUND=round_first, STATS=False,
                                          BLOCK_R=block_r, BLOCK_I=block_i, num_warps=warps)
        block = min(1024, triton.next_power_of_2(OI))
        parts = triton.cdiv(OI, block)
        cnt = torch.empty(parts, dtype=torch.float32, device=device)
        mean = torch.empty_like(cnt)
        m2 = torch.empty_like(cnt)
        merge_splits_kernel[(parts,)](part, cnt, mean, m2, OI, split, BLOCK=block, num_warps=4)
    std_final_kernel[(1,)](cnt, mean, m2, y, parts, correction, BLOCK=MERGE_BLOCK, num_warps=4)
    if out is not None:
        out.copy_(y)
        return out
    return y
