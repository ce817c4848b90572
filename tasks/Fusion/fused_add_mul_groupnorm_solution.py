import torch
import triton
import triton.language as tl

MAX_CHUNK = 2048     # group elements per program
PART_BLOCK = 1024    # partial statistics merged per step


@triton.jit
def _product(x1_ptr, x2_ptr, base1, n, c0, e, mask, S, s2n, s2c, s2s):
    # m = (x1 + x2) * x2 at group elements e (channel c0 + e // S, position e % S) of sample n
    x1 = tl.load(x1_ptr + base1 + e, mask=mask, other=0.0).to(tl.float32)
    c = c0 + e // S
    s = e % S
    x2 = tl.load(x2_ptr + n * s2n + c * s2c + s * s2s, mask=mask, other=0.0).to(tl.float32)
    return (x1 + x2) * x2


@triton.jit
def group_stats_kernel(x1_ptr, x2_ptr, part_ptr, C, S, Cg, G, group_numel, num_chunks,
                       s2n, s2c, s2s, CHUNK: tl.constexpr):
    # Program (group, chunk): mean and sum of squared deviations of its chunk, written to
    # part[group, chunk] and part[num_groups_total + group, chunk] (merged later, Chan's formula).
    gid = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    n = gid // G
    c0 = (gid % G) * Cg
    base1 = (n * C + c0) * S
    e = (chunk * CHUNK + tl.arange(0, CHUNK)).to(tl.int64)
    mask = e < group_numel
    m = _product(x1_ptr, x2_ptr, base1, n, c0, e, mask, S, s2n, s2c, s2s)
    count = tl.minimum(group_numel - chunk * CHUNK, CHUNK).to(tl.float32)
    mean = tl.sum(tl.where(mask, m, 0.0), axis=0) / count
    d = tl.where(mask, m - mean, 0.0)
    m2 = tl.sum(d * d, axis=0)
    total_groups = tl.num_programs(0).to(tl.int64)
    tl.store(part_ptr + gid * num_chunks + chunk, mean)
    tl.store(part_ptr + (total_groups + gid) * num_chunks + chunk, m2)


@triton.jit
def group_apply_kernel(x1_ptr, x2_ptr, w_ptr, b_ptr, y_ptr, part_ptr, C, S, Cg, G, group_numel,
                       num_chunks, eps, s2n, s2c, s2s,
                       HAS_W: tl.constexpr, HAS_B: tl.constexpr, CHUNK: tl.constexpr,
                       PART_BLOCK: tl.constexpr):
    gid = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    total_groups = tl.num_programs(0).to(tl.int64)
    n = gid // G
    c0 = (gid % G) * Cg
    # merge the chunk statistics of this group: mean, then the sum of squared deviations
    p = tl.arange(0, PART_BLOCK)
    mean_acc = tl.zeros((PART_BLOCK,), dtype=tl.float32)
    for p0 in range(0, num_chunks, PART_BLOCK):
        idx = p0 + p
        ok = idx < num_chunks
        cnt = tl.minimum(group_numel - idx * CHUNK, CHUNK).to(tl.float32)
        mu = tl.load(part_ptr + gid * num_chunks + idx, mask=ok, other=0.0)
        mean_acc += tl.where(ok, cnt * mu, 0.0)
    mean = tl.sum(mean_acc, axis=0) / group_numel
    m2_acc = tl.zeros((PART_BLOCK,), dtype=tl.float32)
    for p0 in range(0, num_chunks, PART_BLOCK):
        idx = p0 + p
        ok = idx < num_chunks
        cnt = tl.minimum(group_numel - idx * CHUNK, CHUNK).to(tl.float32)
        mu = tl.load(part_ptr + gid * num_chunks + idx, mask=ok, other=0.0)
        m2 = tl.load(part_ptr + (total_groups + gid) * num_chunks + idx, mask=ok, other=0.0)
        delta = mu - mean
        m2_acc += tl.where(ok, m2 + cnt * delta * delta, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(m2_acc, axis=0) / group_numel + eps)

    base1 = (n * C + c0) * S
    e = (chunk * CHUNK + tl.arange(0, CHUNK)).to(tl.int64)
    mask = e < group_numel
    m = _product(x1_ptr, x2_ptr, base1, n, c0, e, mask, S, s2n, s2c, s2s)
    y = (m - mean) * rstd
    c = c0 + e // S
    if HAS_W:
        y = y * tl.load(w_ptr + c, mask=mask, other=1.0).to(tl.float32)
    if HAS_B:
        y = y + tl.load(b_ptr + c, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + base1 + e, y.to(y_ptr.dtype.element_ty), mask=mask)


def _spatial_stride(t, sizes):
    # one stride that walks the flattened spatial dims of the view t, or None if there is none
    dims = [(size, t.stride(2 + i)) for i, size in enumerate(sizes) if size != 1]
    if not dims:
        return 0
    if all(stride == 0 for _, stride in dims):
        return 0
    expected = dims[-1][1]
    for size, stride in reversed(dims):
        if stride != expected:
            return None
        expected = stride * size
    return dims[-1][1]


def fused_add_mul_groupnorm(input1, input2, weight, bias, num_groups, eps=1e-5, *, out=None):
    if input1.dim() < 2:
        raise ValueError("input1 must have shape (N, C, *)")
    shape = tuple(input1.shape)
    N, C = shape[0], shape[1]
    G = int(num_groups)
    if C % G != 0:
        raise ValueError("num_groups must divide the number of channels")
    spatial = shape[2:]
    S = 1
    for d in spatial:
        S *= d
    x1 = input1.contiguous()
    weight = weight.contiguous() if weight is not None else None
    bias = bias.contiguous() if bias is not None else None
    x2 = input2.expand(shape)
    s2s = _spatial_stride(x2, spatial)
    if s2s is None:
        x2 = x2.contiguous()
        s2s = 1 if S > 1 else 0
    s2n, s2c = x2.stride(0), x2.stride(1)
    y = torch.empty(shape, dtype=input1.dtype, device=input1.device)
    Cg = C // G
    group_numel = Cg * S
    if y.numel() == 0:
        return y
    chunk = min(MAX_CHUNK, triton.next_power_of_2(group_numel))
    num_chunks = triton.cdiv(group_numel, chunk)
    groups_total = N * G
    part = torch.empty((2, groups_total, num_chunks), dtype=torch.float32, device=input1.device)
    warps = 8 if chunk >= 2048 else 4
    grid = (groups_total, num_chunks)
    group_stats_kernel[grid](x1, x2, part, C, S, Cg, G, group_numel, num_chunks, s2n, s2c, s2s,
                             CHUNK=chunk, num_warps=warps)
    has_w, has_b = weight is not None, bias is not None
    group_apply_kernel[grid](x1, x2, weight if has_w else x1, bias if has_b else x1, y, part,
                             C, S, Cg, G, group_numel, num_chunks, float(eps), s2n, s2c, s2s,
                             HAS_W=has_w, HAS_B=has_b, CHUNK=chunk,
                             PART_BLOCK=min(PART_BLOCK, triton.next_power_of_2(num_chunks)), num_warps=warps)
    if out is not None:
        out.copy_(y)
        return out
    return y
