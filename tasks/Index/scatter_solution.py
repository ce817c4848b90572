import torch
import triton
import triton.language as tl

COPY_BLOCK = 2048
SCATTER_BLOCK = 1024
MAX_RANK = 4


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def scatter_kernel(idx_ptr, src_ptr, out_ptr, n, s1, s2, s3,
                   ss0, ss1, ss2, ss3, os0, os1, os2, os3,
                   DIM: tl.constexpr, BLOCK: tl.constexpr):
    # Walk the contiguous 4-d index (sizes s0..s3) in order; element p goes from src[p] (strides ss*)
    # to out[p with coordinate DIM replaced by index[p]] (strides os*).
    lin = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = lin < n
    i3 = lin % s3
    r = lin // s3
    i2 = r % s2
    r = r // s2
    i1 = r % s1
    i0 = r // s1
    target = tl.load(idx_ptr + lin, mask=mask, other=0).to(tl.int64)
    val = tl.load(src_ptr + i0 * ss0 + i1 * ss1 + i2 * ss2 + i3 * ss3, mask=mask)
    if DIM == 0:
        i0 = target
    elif DIM == 1:
        i1 = target
    elif DIM == 2:
        i2 = target
    else:
        i3 = target
    tl.store(out_ptr + i0 * os0 + i1 * os1 + i2 * os2 + i3 * os3, val, mask=mask)


def _merge_dims(dim, isz, ssz, sst, osz, ost):
    """Fold neighbouring dims (other than `dim`) whose index, src and out extents agree and whose
    strides nest, until at most MAX_RANK dims remain."""
    i = len(isz) - 2
    while len(isz) > MAX_RANK and i >= 0:
        j = i + 1
        if (i != dim and j != dim and isz[j] == ssz[j] == osz[j]
                and sst[i] == sst[j] * ssz[j] and ost[i] == ost[j] * osz[j]):
            isz[i:j + 1] = [isz[i] * isz[j]]
            ssz[i:j + 1] = [ssz[i] * ssz[j]]
            osz[i:j + 1] = [osz[i] * osz[j]]
            sst[i:j + 1] = [sst[j]]
            ost[i:j + 1] = [ost[j]]
            if dim > i:
                dim -= 1
        i -= 1
    if len(isz) > MAX_RANK:
        raise NotImplementedError("scatter: could not fold the index to at most 4 dims")
    return dim


def scatter(input, dim, index, src):
    x = input.contiguous()
    if x.data_ptr() != input.data_ptr():
        out = x  # already a fresh copy
    else:
        out = torch.empty_like(x)
        n = x.numel()
        if n:
            copy_kernel[(triton.cdiv(n, COPY_BLOCK),)](x, out, n, BLOCK=COPY_BLOCK, num_warps=8)
    n = index.numel()
    if n == 0:
        return out
    rank = max(1, out.dim())
    d = dim % rank
    idx = index.contiguous()
    isz = list(idx.shape) or [1]
    ssz = list(src.shape) or [1]
    sst = list(src.stride()) or [1]
    osz = list(out.shape) or [1]
    ost = list(out.stride()) or [1]
    if rank > MAX_RANK:
        src = src.contiguous()
        sst = list(src.stride())
        d = _merge_dims(d, isz, ssz, sst, osz, ost)
    pad = MAX_RANK - len(isz)
    isz = [1] * pad + isz
    sst = [0] * pad + sst
    ost = [0] * pad + ost
    d += pad
    scatter_kernel[(triton.cdiv(n, SCATTER_BLOCK),)](
        idx, src, out, n, isz[1], isz[2], isz[3],
        sst[0], sst[1], sst[2], sst[3], ost[0], ost[1], ost[2], ost[3],
        DIM=d, BLOCK=SCATTER_BLOCK, num_warps=4)
    return out
