import torch
import triton
import triton.language as tl

BLOCK = 1024
MAX_DIMS = 4
MODES = {None: 0, "trunc": 1, "floor": 2}


@triton.jit
def stack_div_kernel(x_ptr, d_ptr, y_ptr, n, scalar,
                     S1, S2, S3,
                     ys0, ys1, ys2, ys3,
                     ds0, ds1, ds2, ds3,
                     MODE: tl.constexpr, SCALAR: tl.constexpr, WIDE: tl.constexpr, BLOCK: tl.constexpr):
    # One element of one (contiguous) input per lane, written to its place in the joined output
    # (a strided view) after dividing by the broadcast divisor.
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
    x = tl.load(x_ptr + offs, mask=inb, other=0.0)
    if SCALAR:
        d = tl.zeros_like(x.to(tl.float32)) + scalar
    else:
        d = tl.load(d_ptr + (i0.to(tl.int64) * ds0 + i1 * ds1 + i2 * ds2 + i3 * ds3), mask=inb, other=1.0)
    if MODE == 0:
        q = x.to(tl.float32) / d.to(tl.float32)
    else:
        # float64 quotient of float32 (or narrower) operands: never rounds onto an integer it is not,
        # so floor/trunc of it are those of the exact quotient
        q64 = x.to(tl.float32).to(tl.float64) / d.to(tl.float32).to(tl.float64)
        if MODE == 1:
            q64 = tl.where(q64 < 0, tl.ceil(q64), tl.floor(q64))
        else:
            q64 = tl.floor(q64)
        q = q64.to(tl.float32)  # exact for integers below 2**24
    y_off = i0.to(tl.int64) * ys0 + i1 * ys1 + i2 * ys2 + i3 * ys3
    tl.store(y_ptr + y_off, q.to(y_ptr.dtype.element_ty), mask=inb)


def _coalesce(shape, strides):
    """Drop size-1 dims and merge neighbours that every tensor walks contiguously."""
    out = []
    for size, st in zip(shape, zip(*strides)):
        if size == 1:
            continue
        if out and all(a == b * size for a, b in zip(out[-1][1], st)):
            out[-1][0] *= size
            out[-1][1] = list(st)
        else:
            out.append([size, list(st)])
    if not out:
        out = [[1, [0] * len(strides)]]
    return [d[0] for d in out], [list(t) for t in zip(*[d[1] for d in out])]


def fused_hstack_div(tensors, divisor, *, rounding_mode=None, out=None):
    if rounding_mode not in MODES:
        raise ValueError(f"rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    parts = [t if t.dim() > 0 else t.reshape(1) for t in tensors]
    first = parts[0]
    cat_dim = 0 if first.dim() == 1 else 1
    shape = list(first.shape)
    shape[cat_dim] = sum(t.shape[cat_dim] for t in parts)
    shape = tuple(shape)
    y = torch.empty(shape, dtype=first.dtype, device=first.device)
    is_scalar = not isinstance(divisor, torch.Tensor)
    div = None if is_scalar else divisor.expand(shape)
    offset = 0
    for t in parts:
        width = t.shape[cat_dim]
        x = t.contiguous()
        n = x.numel()
        if n:
            y_part = y.narrow(cat_dim, offset, width)
            d_part = y_part if is_scalar else div.narrow(cat_dim, offset, width)
            sizes, (xs, ys, ds) = _coalesce(x.shape, [x.stride(), y_part.stride(), d_part.stride()])
            if len(sizes) > MAX_DIMS and not is_scalar:
                # a materialized divisor slice walks like the input: only the joined dim keeps dims apart
                d_part = d_part.contiguous()
                sizes, (xs, ys, ds) = _coalesce(x.shape, [x.stride(), y_part.stride(), d_part.stride()])
            if len(sizes) > MAX_DIMS:
                raise NotImplementedError(f"more than {MAX_DIMS} non-mergeable dims")
            pad = MAX_DIMS - len(sizes)
            sizes = [1] * pad + sizes
            ys = [0] * pad + ys
            ds = [0] * pad + ds
            stack_div_kernel[(triton.cdiv(n, BLOCK),)](
                x, d_part, y_part, n, float(divisor) if is_scalar else 1.0,
                sizes[1], sizes[2], sizes[3],
                ys[0], ys[1], ys[2], ys[3],
                ds[0], ds[1], ds[2], ds[3],
                MODE=MODES[rounding_mode], SCALAR=is_scalar, WIDE=n >= 2**31, BLOCK=BLOCK, num_warps=4)
        offset += width
    if out is not None:
        out.copy_(y)
        return out
    return y
