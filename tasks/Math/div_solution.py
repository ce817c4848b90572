import torch
import triton
import triton.language as tl

MODES = {None: 0, "trunc": 1, "floor": 2}


@triton.jit
def div_kernel(a_ptr, b_ptr, out_ptr, b_value, M, N, D1, D2,
               sa0, sa1, sa2, sa3, sb0, sb1, sb2, sb3,
               B_SCALAR: tl.constexpr, MODE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # The output is viewed as M = D0 * D1 * D2 rows of N elements; each operand has its own strides
    # (0 along broadcast dimensions). Row indices are split once per row, not per element.
    # One flat grid (a grid's second axis holds at most 65535 programs): program -> (row block, column block).
    pid = tl.program_id(0).to(tl.int64)
    col_blocks = tl.cdiv(N, BLOCK_N)
    rows = (pid // col_blocks) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = (pid % col_blocks) * BLOCK_N + tl.arange(0, BLOCK_N)
    i2 = rows % D2
    rest = rows // D2
    i1 = rest % D1
    i0 = rest // D1
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    a_off = (i0 * sa0 + i1 * sa1 + i2 * sa2)[:, None] + (cols * sa3)[None, :]
    a = tl.load(a_ptr + a_off, mask=mask).to(tl.float32)
    if B_SCALAR:
        b = tl.zeros_like(a) + b_value
    else:
        b_off = (i0 * sb0 + i1 * sb1 + i2 * sb2)[:, None] + (cols * sb3)[None, :]
        b = tl.load(b_ptr + b_off, mask=mask).to(tl.float32)
    q = tl.div_rn(a, b)
    if MODE == 1:
        y = tl.where(q < 0, tl.ceil(q), tl.floor(q))
    elif MODE == 2:
        # floor(fl(a / b)) is at most one off the exact floor t; check t <= a / b < t + 1 exactly
        # from the signs of a - t*b and a - (t+1)*b (one rounding each, so their signs are exact)
        t = tl.floor(q)
        r0 = tl.fma(-t, b, a)
        r1 = tl.fma(-(t + 1.0), b, a)
        pos = b > 0
        too_high = tl.where(pos, r0 < 0, r0 > 0)
        too_low = tl.where(pos, r1 >= 0, r1 <= 0)
        t = tl.where(too_high, t - 1.0, tl.where(too_low, t + 1.0, t))
        y = tl.where(b == 0, q, t)
    else:
        y = q
    out_off = rows[:, None] * N + cols[None, :]
    tl.store(out_ptr + out_off, y.to(out_ptr.dtype.element_ty), mask=mask)


def _collapse(shape, strides_list):
    """Drop size-1 dimensions and merge neighbours that are contiguous in every operand."""
    dims = [(s, [st[d] for st in strides_list]) for d, s in enumerate(shape) if s != 1]
    merged = []
    for size, strides in dims:
        if merged and all(prev == cur * size for prev, cur in zip(merged[-1][1], strides)):
            merged[-1] = (merged[-1][0] * size, strides)
        else:
            merged.append((size, strides))
    return merged or [(1, [0] * len(strides_list))]


def div(input, other, rounding_mode=None, out=None):
    if rounding_mode not in MODES:
        raise ValueError(f"rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    scalar = not isinstance(other, torch.Tensor)
    shape = tuple(input.shape) if scalar else tuple(torch.broadcast_shapes(input.shape, other.shape))
    a = input.expand(shape)
    b = a if scalar else other.expand(shape)
    result = torch.empty(shape, device=input.device, dtype=input.dtype)
    dims = _collapse(shape, [a.stride(), b.stride()])
    if len(dims) > 4:
        a = a.contiguous()
        b = a if scalar else b.contiguous()
        dims = _collapse(shape, [a.stride(), b.stride()])
    dims = [(1, [0, 0])] * (4 - len(dims)) + dims
    sizes = [d[0] for d in dims]
    sa = [d[1][0] for d in dims]
    sb = [d[1][1] for d in dims]
    n = sizes[3]
    m = sizes[0] * sizes[1] * sizes[2]
    block_n = min(1024, triton.next_power_of_2(n))
    block_m = min(triton.next_power_of_2(m), max(1, 4096 // block_n))
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    div_kernel[grid](a, b, result, float(other) if scalar else 0.0, m, n, sizes[1], sizes[2],
                     sa[0], sa[1], sa[2], sa[3], sb[0], sb[1], sb[2], sb[3],
                     B_SCALAR=scalar, MODE=MODES[rounding_mode], BLOCK_M=block_m, BLOCK_N=block_n, num_warps=8)
    if out is not None:
        out.copy_(result)
        return out
    return result
