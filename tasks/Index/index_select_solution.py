import torch
import triton
import triton.language as tl

TILE = 4096  # output elements per program


@triton.jit
def index_select_kernel(x_ptr, index_ptr, out_ptr, M, L, D, inner,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # x is (outer, D, inner) and out (outer, L, inner), both contiguous. Output row m = o * L + j
    # (M = outer * L rows of `inner` elements) copies x[o, index[j], :].
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_mask = rows < M
    o = rows // L
    j = rows % L
    src_row = tl.load(index_ptr + j, mask=row_mask, other=0).to(tl.int64)
    mask = row_mask[:, None] & (cols < inner)[None, :]
    src = x_ptr + ((o * D + src_row) * inner)[:, None] + cols[None, :]
    vals = tl.load(src, mask=mask)
    tl.store(out_ptr + (rows * inner)[:, None] + cols[None, :], vals, mask=mask)


def _pow2(n):
    return triton.next_power_of_2(max(1, int(n)))


def index_select(input, dim, index):
    x = input.contiguous()
    nd = x.dim()
    shape = list(x.shape) if nd > 0 else [1]
    d = dim % nd if nd > 0 else 0
    idx = index.reshape(-1).contiguous()
    count = idx.numel()
    outer = 1
    for s in shape[:d]:
        outer *= s
    inner = 1
    for s in shape[d + 1:]:
        inner *= s
    out_shape = list(x.shape)
    if nd > 0:
        out_shape[d] = count
    out = torch.empty(out_shape, device=x.device, dtype=x.dtype)
    m = outer * count
    block_n = min(_pow2(inner), 1024)
    block_m = min(_pow2(m), max(1, TILE // block_n))
    grid = (max(1, triton.cdiv(m, block_m)), triton.cdiv(inner, block_n))
    index_select_kernel[grid](x, idx, out, m, count, shape[d], inner,
                              BLOCK_M=block_m, BLOCK_N=block_n,
                              num_warps=8 if block_m * block_n >= 4096 else 4)
    return out
