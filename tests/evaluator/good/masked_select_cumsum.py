# task: Index/masked_select
# style: tl.cumsum stream compaction, tl.reduce with a custom combine fn, broadcast through stride-0 expand, x.stride() tuples, .item() for the data-dependent length
import torch
import triton
import triton.language as tl


@triton.jit
def _add_i32(a, b):
    return a + b


@triton.jit
def _mask_at(mask_ptr, offs, live, d1, d2, d3, ms0, ms1, ms2, ms3):
    # linear position (row-major over the broadcast shape, padded to 4-D) -> strided mask element
    i3 = offs % d3
    t = offs // d3
    i2 = t % d2
    t = t // d2
    i1 = t % d1
    i0 = t // d1
    m = tl.load(mask_ptr + i0 * ms0 + i1 * ms1 + i2 * ms2 + i3 * ms3, mask=live, other=0)
    return (m != 0) & live, i0, i1, i2, i3


@triton.jit
def count_kernel(mask_ptr, counts_ptr, total, d1, d2, d3, ms0, ms1, ms2, ms3, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    keep, _0, _1, _2, _3 = _mask_at(mask_ptr, offs, offs < total, d1, d2, d3, ms0, ms1, ms2, ms3)
    tl.store(counts_ptr + pid, tl.reduce(keep.to(tl.int32), 0, _add_i32))


@triton.jit
def exclusive_scan_kernel(counts_ptr, starts_ptr, total_ptr, num_blocks, CHUNK: tl.constexpr):
    carry = tl.zeros((), dtype=tl.int64)
    for c0 in range(0, num_blocks, CHUNK):
        idx = c0 + tl.arange(0, CHUNK)
        vals = tl.load(counts_ptr + idx, mask=idx < num_blocks, other=0).to(tl.int64)
        inclusive = tl.cumsum(vals, axis=0)
        tl.store(starts_ptr + idx, carry + inclusive - vals, mask=idx < num_blocks)
        carry += tl.sum(vals, axis=0)
    tl.store(total_ptr, carry)


@triton.jit
def compact_kernel(x_ptr, mask_ptr, starts_ptr, out_ptr, total, d1, d2, d3,
                   ms0, ms1, ms2, ms3, xs0, xs1, xs2, xs3, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    keep, i0, i1, i2, i3 = _mask_at(mask_ptr, offs, offs < total, d1, d2, d3, ms0, ms1, ms2, ms3)
    flags = keep.to(tl.int32)
    dest = tl.load(starts_ptr + pid) + tl.cumsum(flags, axis=0) - flags
    vals = tl.load(x_ptr + i0 * xs0 + i1 * xs1 + i2 * xs2 + i3 * xs3, mask=keep)
    tl.store(out_ptr + dest, vals, mask=keep)


def masked_select(input, mask):
    assert mask.dtype == torch.bool, f"mask must be bool, got {mask.dtype}"
    shape = torch.broadcast_shapes(input.shape, mask.shape)
    assert len(shape) <= 4, "up to 4-D broadcast shapes are supported"
    x = input.expand(shape)
    m = mask.expand(shape)
    pad = 4 - len(shape)
    dims = (1,) * pad + tuple(shape)
    xs = (0,) * pad + x.stride()
    ms = (0,) * pad + m.stride()
    total = 1
    for d in dims:
        total *= d

    BLOCK = 1024
    num_blocks = max(1, triton.cdiv(total, BLOCK))
    dev = input.device
    counts = torch.empty(num_blocks, device=dev, dtype=torch.int32)
    starts = torch.empty(num_blocks, device=dev, dtype=torch.int64)
    selected = torch.empty(1, device=dev, dtype=torch.int64)

    count_kernel[(num_blocks,)](m, counts, total, dims[1], dims[2], dims[3], *ms, BLOCK=BLOCK)
    exclusive_scan_kernel[(1,)](counts, starts, selected, num_blocks, CHUNK=1024)
    n_out = int(selected.item())
    out = torch.empty(n_out, device=dev, dtype=input.dtype)
    if n_out > 0:
        compact_kernel[(num_blocks,)](x, m, starts, out, total, dims[1], dims[2], dims[3], *ms, *xs, BLOCK=BLOCK)
    return out
