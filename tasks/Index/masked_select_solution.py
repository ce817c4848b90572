import torch
import triton
import triton.language as tl

BLOCK = 4096       # positions per program
SCAN_BLOCK = 1024  # block counts per step of the prefix sum
MAX_RANK = 4       # dims the kernels index after merging


@triton.jit
def _offsets(e, S1, S2, S3, s0, s1, s2, s3):
    # memory offset of flat (row-major) position e of the (S0, S1, S2, S3) broadcast shape
    i3 = e % S3
    t = e // S3
    i2 = t % S2
    t = t // S2
    i1 = t % S1
    i0 = t // S1
    return i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3


@triton.jit
def count_kernel(m_ptr, counts_ptr, N, S1, S2, S3, ms0, ms1, ms2, ms3, BLOCK: tl.constexpr):
    e = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    valid = e < N
    m = tl.load(m_ptr + _offsets(e, S1, S2, S3, ms0, ms1, ms2, ms3), mask=valid, other=0)
    keep = (m != 0) & valid
    tl.store(counts_ptr + tl.program_id(0), tl.sum(keep.to(tl.int32), axis=0))


@triton.jit
def scan_kernel(counts_ptr, starts_ptr, num_blocks, SCAN_BLOCK: tl.constexpr):
    # exclusive prefix sum of the per-block counts; starts[num_blocks] receives the total
    offs = tl.arange(0, SCAN_BLOCK)
    carry = tl.zeros((), dtype=tl.int64)
    for b0 in range(0, num_blocks, SCAN_BLOCK):
        b = b0 + offs
        c = tl.load(counts_ptr + b, mask=b < num_blocks, other=0).to(tl.int64)
        inclusive = tl.cumsum(c, axis=0)
        tl.store(starts_ptr + b, carry + inclusive - c, mask=b < num_blocks)
        carry += tl.sum(c, axis=0)
    tl.store(starts_ptr + num_blocks, carry)


@triton.jit
def select_kernel(x_ptr, m_ptr, starts_ptr, out_ptr, N, S1, S2, S3,
                  xs0, xs1, xs2, xs3, ms0, ms1, ms2, ms3, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    e = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    valid = e < N
    m = tl.load(m_ptr + _offsets(e, S1, S2, S3, ms0, ms1, ms2, ms3), mask=valid, other=0)
    keep = (m != 0) & valid
    k = keep.to(tl.int32)
    pos = tl.load(starts_ptr + pid) + (tl.cumsum(k, axis=0) - k).to(tl.int64)
    vals = tl.load(x_ptr + _offsets(e, S1, S2, S3, xs0, xs1, xs2, xs3), mask=keep)
    tl.store(out_ptr + pos, vals, mask=keep)


def _merged(shape, strides_list):
    """Drop size-1 dims and merge neighbours that are contiguous with each other in every tensor."""
    dims = [(s, [st[d] for st in strides_list]) for d, s in enumerate(shape) if s != 1]
    merged = []
    for s, sts in dims:
        if merged:
            ps, psts = merged[-1]
            if all(p == q * s for p, q in zip(psts, sts)):
                merged[-1] = (ps * s, sts)
                continue
        merged.append((s, sts))
    if not merged:
        merged = [(1, [0] * len(strides_list))]
    if len(merged) > MAX_RANK:
        return None
    while len(merged) < MAX_RANK:
        merged.insert(0, (1, [0] * len(strides_list)))
    return [s for s, _ in merged], [[sts[i] for _, sts in merged] for i in range(len(strides_list))]


def masked_select(input, mask):
    shape = torch.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    x = input.expand(tuple(shape))
    m = mask.expand(tuple(shape))
    n = 1
    for s in shape:
        n *= s
    merged = _merged(list(shape), [x.stride(), m.stride()])
    if merged is None:
        # more dims than the kernels index: materialize the broadcast (then one flat dim)
        x = x.contiguous()
        m = m.contiguous()
        merged = _merged(list(shape), [x.stride(), m.stride()])
    sizes, (xs, ms) = merged
    num_blocks = max(1, triton.cdiv(n, BLOCK))
    counts = torch.empty((num_blocks,), device=input.device, dtype=torch.int32)
    starts = torch.empty((num_blocks + 1,), device=input.device, dtype=torch.int64)
    count_kernel[(num_blocks,)](m, counts, n, sizes[1], sizes[2], sizes[3], *ms, BLOCK=BLOCK, num_warps=8)
    scan_kernel[(1,)](counts, starts, num_blocks, SCAN_BLOCK=SCAN_BLOCK, num_warps=4)
    total = int(starts[num_blocks].item())
    out = torch.empty((total,), device=input.device, dtype=input.dtype)
    if total > 0:
        select_kernel[(num_blocks,)](x, m, starts, out, n, sizes[1], sizes[2], sizes[3], *xs, *ms,
                                     BLOCK=BLOCK, num_warps=8)
    return out
