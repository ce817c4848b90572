import torch
import triton
import triton.language as tl

TILE = 4096      # output elements per program
MAX_RANK = 4     # dims the kernel indexes after merging; more loop on the host


@triton.jit
def expand_where_kernel(x_ptr, c_ptr, o_ptr, out_ptr, R, N, S1, S2,
                        xs0, xs1, xs2, xs3, cs0, cs1, cs2, cs3, os0, os1, os2, os3,
                        BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    # The output is (S0, S1, S2, N) contiguous, seen as R = S0*S1*S2 rows of N; each input is read
    # through its own (broadcast, possibly zero) strides.
    rows = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    i2 = rows % S2
    t = rows // S2
    i1 = t % S1
    i0 = t // S1
    mask = (rows < R)[:, None] & (cols < N)[None, :]
    x_off = (i0 * xs0 + i1 * xs1 + i2 * xs2)[:, None] + cols[None, :] * xs3
    c_off = (i0 * cs0 + i1 * cs1 + i2 * cs2)[:, None] + cols[None, :] * cs3
    o_off = (i0 * os0 + i1 * os1 + i2 * os2)[:, None] + cols[None, :] * os3
    c = tl.load(c_ptr + c_off, mask=mask, other=0)
    x = tl.load(x_ptr + x_off, mask=mask & (c != 0))
    o = tl.load(o_ptr + o_off, mask=mask & (c == 0))
    y = tl.where(c != 0, x, o)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], y, mask=mask)


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


def _pow2(n):
    return triton.next_power_of_2(max(1, int(n)))


def _where_into(x, c, o, out):
    """out (contiguous) = where(c, x, o) for views x, c, o of out's shape."""
    merged = _merged(list(out.shape), [x.stride(), c.stride(), o.stride()])
    if merged is None:
        # more dims than the kernel indexes: one call per index of the leading dim
        for i in range(out.shape[0]):
            _where_into(x.select(0, i), c.select(0, i), o.select(0, i), out.select(0, i))
        return
    shape, (xs, cs, os_) = merged
    n = shape[3]
    r = shape[0] * shape[1] * shape[2]
    block_n = min(_pow2(n), 1024)
    block_r = min(_pow2(r), max(1, TILE // block_n))
    grid = (triton.cdiv(r, block_r), triton.cdiv(n, block_n))
    expand_where_kernel[grid](x, c, o, out, r, n, shape[1], shape[2], *xs, *cs, *os_,
                              BLOCK_R=block_r, BLOCK_N=block_n, num_warps=8 if block_r * block_n >= 4096 else 4)


def expand_where(input, target_sizes, cond, other):
    target = list(target_sizes)
    lead = len(target) - input.dim()
    for i, s in enumerate(target):
        if s == -1:
            target[i] = input.shape[i - lead]
    out_shape = torch.broadcast_shapes(tuple(target), tuple(cond.shape), tuple(other.shape))
    x = input.expand(tuple(target)).expand(tuple(out_shape))
    c = cond.expand(tuple(out_shape))
    o = other.expand(tuple(out_shape))
    out = torch.empty(out_shape, device=other.device, dtype=other.dtype)
    if out.numel() == 0:
        return out
    _where_into(x, c, o, out)
    return out
