import torch
import triton
import triton.language as tl

TILE = 4096      # elements per program for the row copy
MAX_RANK = 4     # dims the kernels index after merging; more loop on the host


@triton.jit
def copy_rows_kernel(x_ptr, out_ptr, R, N, S1, S2, s0, s1, s2, s3,
                     BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    # out is (S0, S1, S2, N) contiguous; its last dim is also the input's fastest one.
    rows = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    i2 = rows % S2
    t = rows // S2
    i1 = t % S1
    i0 = t // S1
    mask = (rows < R)[:, None] & (cols < N)[None, :]
    src = (i0 * s0 + i1 * s1 + i2 * s2)[:, None] + cols[None, :] * s3
    vals = tl.load(x_ptr + src, mask=mask)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], vals, mask=mask)


@triton.jit
def transpose_tiles_kernel(x_ptr, out_ptr, P, N, B1, out_stride_p, out_stride_b0, out_stride_b1,
                           in_stride_p, in_stride_n, in_stride_b0, in_stride_b1, tiles_p, tiles_n,
                           BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr):
    # A (BLOCK_P, BLOCK_N) tile spans output dim p (the input's fastest dim) and the output's last
    # dim n (stride 1 in the output); the two other dims (b0, b1) select the batch.
    pid = tl.program_id(0)
    tn = pid % tiles_n
    t = pid // tiles_n
    tp = t % tiles_p
    b = (t // tiles_p).to(tl.int64)
    b1 = b % B1
    b0 = b // B1
    ip = tp.to(tl.int64) * BLOCK_P + tl.arange(0, BLOCK_P)
    jn = tn.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (ip < P)[:, None] & (jn < N)[None, :]
    src = b0 * in_stride_b0 + b1 * in_stride_b1 + ip[:, None] * in_stride_p + jn[None, :] * in_stride_n
    vals = tl.load(x_ptr + src, mask=mask)
    dst = b0 * out_stride_b0 + b1 * out_stride_b1 + ip[:, None] * out_stride_p + jn[None, :]
    tl.store(out_ptr + dst, vals, mask=mask)


def _pow2(n):
    return triton.next_power_of_2(max(1, int(n)))


def _copy_permuted(input, order, out):
    """out (contiguous) = input permuted by `order` (a list of non-negative dims)."""
    # The input stride of each output dim; drop size-1 dims and merge output neighbours that are
    # also neighbours, in the same order, in the input.
    merged = []
    for d in order:
        size, stride = input.shape[d], input.stride(d)
        if size == 1:
            continue
        if merged and merged[-1][1] == stride * size:
            merged[-1] = (merged[-1][0] * size, stride)
        else:
            merged.append((size, stride))
    if not merged:
        merged = [(1, 1)]
    if len(merged) > MAX_RANK:
        # more dims than the kernels index: one call per index of the output's leading dim
        first = order[0]
        rest = [d - (d > first) for d in order[1:]]
        for i in range(input.shape[first]):
            _copy_permuted(input.select(first, i), rest, out.select(0, i))
        return
    while len(merged) < MAX_RANK:
        merged.insert(0, (1, 0))
    sizes = [s for s, _ in merged]
    strides = [st for _, st in merged]
    n = sizes[3]
    fastest = 0
    for i in range(1, 3):
        if sizes[i] > 1 and (sizes[fastest] == 1 or strides[i] < strides[fastest]):
            fastest = i
    if strides[3] == 1 or sizes[fastest] == 1 or strides[3] <= strides[fastest]:
        # the output's last dim is the input's fastest too: copy rows of contiguous runs
        r = sizes[0] * sizes[1] * sizes[2]
        block_n = min(_pow2(n), 1024)
        block_r = min(_pow2(r), max(1, TILE // block_n))
        grid = (triton.cdiv(r, block_r), triton.cdiv(n, block_n))
        copy_rows_kernel[grid](input, out, r, n, sizes[1], sizes[2], *strides,
                               BLOCK_R=block_r, BLOCK_N=block_n,
                               num_warps=8 if block_r * block_n >= 4096 else 4)
        return
    # tile over (fastest, last); the other two output dims are the batch
    out_strides = [sizes[1] * sizes[2] * n, sizes[2] * n, n, 1]
    batch = [i for i in range(3) if i != fastest]
    p = sizes[fastest]
    block_p = min(_pow2(p), 64)
    block_n = min(_pow2(n), 64)
    tiles_p = triton.cdiv(p, block_p)
    tiles_n = triton.cdiv(n, block_n)
    grid = (tiles_n * tiles_p * sizes[batch[0]] * sizes[batch[1]],)
    transpose_tiles_kernel[grid](input, out, p, n, sizes[batch[1]], out_strides[fastest],
                                 out_strides[batch[0]], out_strides[batch[1]], strides[fastest], strides[3],
                                 strides[batch[0]], strides[batch[1]], tiles_p, tiles_n,
                                 BLOCK_P=block_p, BLOCK_N=block_n, num_warps=4)


def permute_copy(input, dims):
    nd = input.dim()
    order = [d % nd for d in dims] if nd > 0 else []
    if sorted(order) != list(range(nd)):
        raise ValueError(f"dims {tuple(dims)} is not a permutation of the {nd} dims")
    out = torch.empty([input.shape[d] for d in order], device=input.device, dtype=input.dtype)
    if out.numel() == 0:
        copy_rows_kernel[(1, 1)](input, out, 0, 1, 1, 1, 0, 0, 0, 0, BLOCK_R=1, BLOCK_N=16)
        return out
    _copy_permuted(input, order, out)
    return out
