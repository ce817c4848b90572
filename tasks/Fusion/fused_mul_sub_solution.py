import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _operand(ptr, offs, mask, scalar, i0, i1, i2, i3, s0, s1, s2, s3, MODE: tl.constexpr):
    # MODE 0: a number; 1: laid out like the (contiguous) output; 2: a broadcast 4-D strided view.
    if MODE == 0:
        v = tl.zeros(offs.shape, dtype=tl.float32) + scalar
    elif MODE == 1:
        v = tl.load(ptr + offs, mask=mask, other=0.0).to(tl.float32)
    else:
        v = tl.load(ptr + (i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3), mask=mask, other=0.0).to(tl.float32)
    return v


@triton.jit
def mul_sub_kernel(x_ptr, m_ptr, s_ptr, y_ptr, n, alpha, m_scalar, s_scalar,
                   d1, d2, d3,
                   xs0, xs1, xs2, xs3, ms0, ms1, ms2, ms3, ss0, ss1, ss2, ss3,
                   X_MODE: tl.constexpr, M_MODE: tl.constexpr, S_MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    i3 = offs % d3
    r = offs // d3
    i2 = r % d2
    r = r // d2
    i1 = r % d1
    i0 = r // d1
    x = _operand(x_ptr, offs, mask, 0.0, i0, i1, i2, i3, xs0, xs1, xs2, xs3, X_MODE)
    m = _operand(m_ptr, offs, mask, m_scalar, i0, i1, i2, i3, ms0, ms1, ms2, ms3, M_MODE)
    s = _operand(s_ptr, offs, mask, s_scalar, i0, i1, i2, i3, ss0, ss1, ss2, ss3, S_MODE)
    y = x * m - alpha * s
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def _broadcast_shape(values):
    dims = []
    for v in values:
        if isinstance(v, torch.Tensor):
            s = list(v.shape)
            if len(s) > len(dims):
                dims = [1] * (len(s) - len(dims)) + dims
            s = [1] * (len(dims) - len(s)) + s
            for i in range(len(dims)):
                if s[i] != dims[i] and s[i] != 1 and dims[i] != 1:
                    raise ValueError("operands do not broadcast together")
                dims[i] = max(dims[i], s[i])
    return tuple(dims)


def _prepare(v, shape):
    """(mode, tensor, scalar, 4 strides) for one operand of the broadcast output `shape`."""
    if not isinstance(v, torch.Tensor):
        return 0, None, float(v), [0, 0, 0, 0]
    if tuple(v.shape) == shape and v.is_contiguous():
        return 1, v, 0.0, [0, 0, 0, 0]
    if len(shape) > 4:
        return 1, v.expand(shape).contiguous(), 0.0, [0, 0, 0, 0]
    e = v.expand(shape)
    strides = [0] * (4 - len(shape)) + [e.stride(i) for i in range(len(shape))]
    return 2, e, 0.0, strides


def fused_mul_sub(input, other_mul, other_sub, alpha=1, out=None):
    shape = _broadcast_shape([input, other_mul, other_sub])
    y = torch.empty(shape, dtype=input.dtype, device=input.device)
    n = y.numel()
    if n > 0:
        dims = [1] * (4 - len(shape)) + list(shape) if len(shape) <= 4 else [1, 1, 1, n]
        xm, xt, _, xs = _prepare(input, shape)
        mm, mt, msc, ms = _prepare(other_mul, shape)
        sm, st, ssc, ss = _prepare(other_sub, shape)
        mt = xt if mt is None else mt
        st = xt if st is None else st
        mul_sub_kernel[(triton.cdiv(n, BLOCK),)](
            xt, mt, st, y, n, float(alpha), msc, ssc,
            dims[1], dims[2], dims[3], *xs, *ms, *ss,
            X_MODE=xm, M_MODE=mm, S_MODE=sm, BLOCK=BLOCK, num_warps=4)
    if out is not None:
        out.copy_(y)
        return out
    return y
