import torch
import triton
import triton.language as tl

BLOCK = 1024
MAX_DIMS = 4


@triton.jit
def index_select_eq_kernel(x_ptr, idx_ptr, o_ptr, y_ptr, n, scalar,
                           S1, S2, S3,
                           xs0, xs1, xs2, xs3,
                           os0, os1, os2, os3,
                           DIM: tl.constexpr, SCALAR: tl.constexpr, CAST_SCALAR: tl.constexpr, FLOAT: tl.constexpr,
                           WIDE: tl.constexpr,
                           BLOCK: tl.constexpr):
    # One element of the (up to 4-D, contiguous) selection per lane: coordinates from the flat
    # index, the coordinate along DIM mapped through `index`, compared with the broadcast `other`.
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
    c0 = i0.to(tl.int64)
    c1 = i1.to(tl.int64)
    c2 = i2.to(tl.int64)
    c3 = i3.to(tl.int64)
    if DIM == 0:
        c0 = tl.load(idx_ptr + i0, mask=inb, other=0).to(tl.int64)
    elif DIM == 1:
        c1 = tl.load(idx_ptr + i1, mask=inb, other=0).to(tl.int64)
    elif DIM == 2:
        c2 = tl.load(idx_ptr + i2, mask=inb, other=0).to(tl.int64)
    else:
        c3 = tl.load(idx_ptr + i3, mask=inb, other=0).to(tl.int64)
    v = tl.load(x_ptr + (c0 * xs0 + c1 * xs1 + c2 * xs2 + c3 * xs3), mask=inb)
    if SCALAR:
        if CAST_SCALAR:
            # a Python number is compared in the tensor's dtype (as torch's type promotion does);
            # floats compare in float32 (exact), so -0.0 == 0.0 also where bfloat16 is emulated
            eq = v.to(tl.float32) == tl.cast(scalar, x_ptr.dtype.element_ty).to(tl.float32)
        else:
            eq = v == scalar
    else:
        w = tl.load(o_ptr + (i0 * os0 + i1 * os1 + i2 * os2 + i3 * os3), mask=inb)
        if FLOAT:
            eq = v.to(tl.float32) == w.to(tl.float32)
        else:
            eq = v == w
    tl.store(y_ptr + offs, eq, mask=inb)


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


def fused_index_select_eq(input, dim, index, other, *, out=None):
    x = input.contiguous() if input.dim() > 0 else input.reshape(1)
    ndim = x.dim()
    d = dim % ndim
    idx = index.reshape(-1).contiguous()
    shape = list(x.shape)
    shape[d] = idx.numel()
    shape = tuple(shape)
    y = torch.empty(shape, dtype=torch.bool, device=x.device)
    n = y.numel()
    if n == 0:
        return y.reshape(input.shape[:0] if input.dim() == 0 else shape)
    is_scalar = not isinstance(other, torch.Tensor)
    o = x if is_scalar else other.expand(shape)
    sizes, (ys, xs, os_), dd = _coalesce(shape, [y.stride(), x.stride(), o.stride() if not is_scalar
                                                 else (0,) * ndim], d)
    if len(sizes) > MAX_DIMS and not is_scalar:
        # a materialized `other` walks like the output: only `dim` keeps dims apart then
        o = o.contiguous()
        sizes, (ys, xs, os_), dd = _coalesce(shape, [y.stride(), x.stride(), o.stride()], d)
    if len(sizes) > MAX_DIMS:
        raise NotImplementedError(f"more than {MAX_DIMS} non-mergeable dims")
    pad = MAX_DIMS - len(sizes)
    sizes = [1] * pad + sizes
    xs = [0] * pad + xs
    os_ = [0] * pad + os_
    dd += pad
    scalar = other if is_scalar else 0
    grid = (triton.cdiv(n, BLOCK),)
    index_select_eq_kernel[grid](
        x, idx, o, y, n, scalar,
        sizes[1], sizes[2], sizes[3],
        xs[0], xs[1], xs[2], xs[3],
        os_[0], os_[1], os_[2], os_[3],
        DIM=dd, SCALAR=is_scalar, CAST_SCALAR=is_scalar and x.is_floating_point(),
        FLOAT=x.is_floating_point() and x.element_size() <= 4, WIDE=n >= 2**31, BLOCK=BLOCK, num_warps=4)
    result = y.reshape(()) if input.dim() == 0 else y
    if out is not None:
        out.copy_(result)
        return out
    return result
