import torch
import triton
import triton.language as tl


@triton.jit
def and_binomial_kernel(a_ptr, b_ptr, n_ptr, p_ptr, out_ptr, seed, M, N, D1, D2,
                        sa0, sa1, sa2, sa3, sb0, sb1, sb2, sb3,
                        sn0, sn1, sn2, sn3, sp0, sp1, sp2, sp3,
                        LOGITS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # The output is viewed as M = D0 * D1 * D2 rows of N elements; every operand has its own strides
    # (0 along broadcast dimensions).
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    i2 = rows % D2
    rest = rows // D2
    i1 = rest % D1
    i0 = rest // D1
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    a = tl.load(a_ptr + (i0 * sa0 + i1 * sa1 + i2 * sa2)[:, None] + (cols * sa3)[None, :], mask=mask, other=0)
    b = tl.load(b_ptr + (i0 * sb0 + i1 * sb1 + i2 * sb2)[:, None] + (cols * sb3)[None, :], mask=mask, other=0)
    n = tl.load(n_ptr + (i0 * sn0 + i1 * sn1 + i2 * sn2)[:, None] + (cols * sn3)[None, :], mask=mask, other=0)
    p = tl.load(p_ptr + (i0 * sp0 + i1 * sp1 + i2 * sp2)[:, None] + (cols * sp3)[None, :], mask=mask, other=0.0)
    p = p.to(tl.float32)
    n = n.to(tl.int32)
    nf = n.to(tl.float32)
    # Draw from Binomial(n, q) with q = min(p, 1 - p) <= 1/2 (so that (1 - q)^n never underflows) and
    # reflect: k = n - k' when p > 1/2.
    if LOGITS:
        flip = p > 0.0
        q = 1.0 / (1.0 + tl.exp(tl.abs(p)))   # sigmoid(-|logit|)
    else:
        flip = p > 0.5
        q = tl.where(flip, 1.0 - p, p)
    out_idx = rows[:, None] * N + cols[None, :]
    u = tl.rand(seed, out_idx)
    # inversion: the smallest k with CDF(k) > u, walking the pmf recurrence
    # pmf(j + 1) = pmf(j) * (n - j) / (j + 1) * q / (1 - q)
    ratio = q / (1.0 - q)
    pmf = tl.exp(nf * tl.log(1.0 - q))
    cdf = pmf
    k = tl.zeros_like(n)
    steps = tl.max(tl.where(mask, n, 0))
    for j in range(0, steps):
        go = (u >= cdf) & (j < n)
        pmf = pmf * ((nf - j) / (j + 1.0)) * ratio
        cdf = tl.where(go, cdf + pmf, cdf)
        k = tl.where(go, k + 1, k)
    k = tl.where(flip, n - k, k)
    y = k.to(tl.float32) * (a & b).to(tl.float32)
    tl.store(out_ptr + out_idx, y.to(out_ptr.dtype.element_ty), mask=mask)


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


def bitwise_and_binomial(input: torch.Tensor, other: torch.Tensor, total_count: torch.Tensor,
                         probs: torch.Tensor = None, logits: torch.Tensor = None):
    if (probs is None) == (logits is None):
        raise ValueError("give exactly one of probs and logits")
    prob = probs if probs is not None else logits
    shape = tuple(torch.broadcast_shapes(input.shape, other.shape, total_count.shape, prob.shape))
    ops = [input.expand(shape), other.expand(shape), total_count.expand(shape), prob.expand(shape)]
    result = torch.empty(shape, device=input.device, dtype=prob.dtype)
    dims = _collapse(shape, [t.stride() for t in ops])
    if len(dims) > 4:
        ops = [t.contiguous() for t in ops]
        dims = _collapse(shape, [t.stride() for t in ops])
    dims = [(1, [0, 0, 0, 0])] * (4 - len(dims)) + dims
    sizes = [d[0] for d in dims]
    strides = [[d[1][i] for d in dims] for i in range(4)]
    cols = sizes[3]
    rows = sizes[0] * sizes[1] * sizes[2]
    block_n = min(1024, triton.next_power_of_2(cols))
    block_m = min(triton.next_power_of_2(rows), max(1, 4096 // block_n))
    # a fresh seed per call from torch's generator (torch.manual_seed makes runs reproducible)
    seed = torch.randint(0, 2**31 - 1, (1,)).item()
    grid = (triton.cdiv(rows, block_m), triton.cdiv(cols, block_n))
    and_binomial_kernel[grid](ops[0], ops[1], ops[2], ops[3], result, seed, rows, cols, sizes[1], sizes[2],
                              *strides[0], *strides[1], *strides[2], *strides[3],
                              LOGITS=probs is None, BLOCK_M=block_m, BLOCK_N=block_n, num_warps=8)
    return result
