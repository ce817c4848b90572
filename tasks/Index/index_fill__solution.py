import torch
import triton
import triton.language as tl

MAX_BLOCK = 1024


@triton.jit
def index_fill_kernel(x_ptr, index_ptr, value, slice_numel, inner, dim_size, blocks_per_slice,
                      BLOCK: tl.constexpr):
    # x is (outer, dim_size, inner) contiguous; program p fills block p % blocks_per_slice of the
    # slice named by index[p // blocks_per_slice].
    pid = tl.program_id(0)
    i = pid // blocks_per_slice
    b = pid % blocks_per_slice
    idx = tl.load(index_ptr + i).to(tl.int64)
    e = b.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = e < slice_numel
    o = e // inner
    n = e % inner
    offs = o * dim_size * inner + idx * inner + n
    vals = tl.full((BLOCK,), value, dtype=x_ptr.dtype.element_ty)
    tl.store(x_ptr + offs, vals, mask=mask)


def index_fill_(dim, x, index, value):
    nd = x.dim()
    d = dim % nd if nd > 0 else 0
    work = x if x.is_contiguous() else x.contiguous()
    shape = list(work.shape) if nd > 0 else [1]
    dim_size = shape[d]
    inner = 1
    for s in shape[d + 1:]:
        inner *= s
    slice_numel = work.numel() // max(1, dim_size)
    idx = index.reshape(-1).contiguous()
    count = idx.numel()
    if count > 0 and slice_numel > 0:
        block = min(MAX_BLOCK, triton.next_power_of_2(slice_numel))
        blocks = triton.cdiv(slice_numel, block)
        fill = value if work.dtype.is_floating_point else int(value)
        index_fill_kernel[(count * blocks,)](work, idx, fill, slice_numel, inner, dim_size, blocks,
                                             BLOCK=block, num_warps=4)
    else:
        # nothing to fill: one program that writes nothing (slice_numel=0), reading a dummy index
        dummy = torch.zeros((1,), device=work.device, dtype=torch.int64)
        index_fill_kernel[(1,)](work, dummy, 0, 0, 1, 1, 1, BLOCK=16)
    if work is not x:
        x.copy_(work)
    return x
