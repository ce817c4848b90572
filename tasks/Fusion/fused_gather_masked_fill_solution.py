import torch
import triton
import triton.language as tl

BLOCK = 1024
MAX_DIMS = 4


@triton.jit
def gather_masked_fill_kernel(x_ptr, idx_ptr, m_ptr, y_ptr, n, value,
                              S1, S2, S3,
                              xs0, xs1, xs2, xs3,
                              ms0, ms1, ms2, ms3,
                              DIM: tl.constexpr, WIDE: tl.constexpr, BLOCK: tl.constexpr):
    # One element of the (up to 4-D, contiguous) output per lane: split the flat index into
    # coordinates, read index[p], and take input at p with its coordinate along DIM replaced.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if WIDE:
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inb = offs < n
    i3 = offs % S3
    r = offs // S3
    i2 = r % S2
    r = r // S2
    i1 = r % S1
    i0 = r // S1
    g = tl.load(idx_ptr + offs, mask=inb, other=0)
    c0 = i0.to(tl.int64)
    c1 = i1.to(tl.int64)
    c2 = i2.to(tl.int64)
    c3 = i3.to(tl.int64)
    if DIM == 0:
        c0 = g
    elif DIM == 1:
        c1 = g
    elif DIM == 2:
        c2 = g
    else:
        c3 = g
    src = c0 * xs0 + c1 * xs1 + c2 * xs2 + c3 * xs3
    v = tl.load(x_ptr + src, mask=inb)
    fill = tl.load(m_ptr + (i0 * ms0 + i1 * ms1 + i2 * ms2 + i3 * ms3), mask=inb, other=0)
    y = tl.where(fill != 0, value, v)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=inb)


def _coalesce(shape, strides, keep):
    """Drop size-1 dims and merge neighbours that every tensor walks contiguously (never `keep`)."""
    dims = [[s, list(st)] for s, st in zip(shape, zip(*strides))]
    kept = [i for i, (s, _) in enumerate(dims) if s != 1 or i == keep]
    out = []
    keep_new = 0
    for i in kept:
        size, st = dims[i]
        if out and i != keep and out[-1][2] != keep and all(a == b * size for a, b in zip(out[-1][1], st)):
            out[-1][0] *= size
            out[-1][1] = st
        else:
            if i == keep:
                keep_new = len(out)
            out.append([size, st, i])
    return [d[0] for d in out], [list(t) for t in zip(*[d[1] for d in out])], keep_new


def fused_gather_masked_fill(input, dim, index, mask, value, *, sparse_grad=False, out=None):
    ndim = input.dim()
    if index.dim() != ndim:
        raise ValueError("index must have as many dims as input")
    d = dim % max(ndim, 1)
    x = input.contiguous()
    idx = index.contiguous()
    shape = tuple(idx.shape)
    y = torch.empty(shape, dtype=input.dtype, device=input.device)
    n = y.numel()
    if n == 0:
        return y
    m = mask.expand(shape)
    # strides of the output (also index's), the input (its own strides on the output's coordinates)
    # and the broadcast mask
    sizes, (ys, xs, ms), dd = _coalesce(shape, [y.stride(), x.stride(), m.stride()], d)
    if len(sizes) > MAX_DIMS:
        # a materialized mask walks like the output, so only the input can keep dims apart
        m = m.contiguous()
        sizes, (ys, xs, ms), dd = _coalesce(shape, [y.stride(), x.stride(), m.stride()], d)
    if len(sizes) > MAX_DIMS:
        raise NotImplementedError(f"more than {MAX_DIMS} non-mergeable dims")
    pad = MAX_DIMS - len(sizes)
    sizes = [1] * pad + sizes
    xs = [0] * pad + xs
    ms = [0] * pad + ms
    dd += pad
    grid = (triton.cdiv(n, BLOCK),)
    gather_masked_fill_kernel[grid](
        x, idx, m, y, n, value,
        sizes[1], sizes[2], sizes[3],
        xs[0], xs[1], xs[2], xs[3],
        ms[0], ms[1], ms[2], ms[3],
        DIM=dd, WIDE=n >= 2**31, BLOCK=BLOCK, num_warps=4)
    if out is not None:
        out.copy_(y)
        return out
    return y
