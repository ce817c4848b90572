import torch
import triton
import triton.language as tl


@triton.jit
def _pow_abs(v, p, P_KIND: tl.constexpr):
    # |v|^p for P_KIND 1 (p = 1), 2 (p = 2) or 0 (any p > 0)
    a = tl.abs(v)
    if P_KIND == 1:
        r = a
    elif P_KIND == 2:
        r = a * a
    else:
        r = tl.where(a > 0.0, tl.exp2(p * tl.log2(tl.maximum(a, 1e-38))), 0.0)
    return r


@triton.jit
def pool_distance_kernel(x1_ptr, x2_ptr, y_ptr, P, H, W, OH, OW, p, eps,
                         P_KIND: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_W: tl.constexpr,
                         BLOCK_OW: tl.constexpr):
    # Program (plane block, output row i): sum the rows of row i's band per column (coalesced rows of W),
    # then fold the column sums into the OW windows, average, and reduce |a - b + eps|^p over the row.
    i = tl.program_id(1)
    planes = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    plane_ok = planes < P
    base = planes.to(tl.int64)[:, None] * H * W
    hs = (i * H) // OH
    he = ((i + 1) * H + OH - 1) // OH
    jj = tl.arange(0, BLOCK_OW)[None, :]
    acc1 = tl.zeros((BLOCK_P, BLOCK_OW), dtype=tl.float32)
    acc2 = tl.zeros((BLOCK_P, BLOCK_OW), dtype=tl.float32)
    wv = tl.arange(0, BLOCK_W)
    for w0 in range(0, W, BLOCK_W):
        w = w0 + wv
        ok = plane_ok[:, None] & (w < W)[None, :]
        col1 = tl.zeros((BLOCK_P, BLOCK_W), dtype=tl.float32)
        col2 = tl.zeros((BLOCK_P, BLOCK_W), dtype=tl.float32)
        for h in range(hs, he):
            offs = base + h * W + w[None, :]
            col1 += tl.load(x1_ptr + offs, mask=ok, other=0.0).to(tl.float32)
            col2 += tl.load(x2_ptr + offs, mask=ok, other=0.0).to(tl.float32)
        # the output columns whose windows meet this chunk of columns
        j_lo = (w0 * OW) // W
        j_hi = tl.minimum(OW, ((w0 + BLOCK_W) * OW + W - 1) // W + 1)
        for j in range(j_lo, j_hi):
            ws = (j * W) // OW
            we = ((j + 1) * W + OW - 1) // OW
            member = ((w >= ws) & (w < we))[None, :]
            s1 = tl.sum(tl.where(member, col1, 0.0), axis=1)
            s2 = tl.sum(tl.where(member, col2, 0.0), axis=1)
            acc1 += tl.where(jj == j, s1[:, None], 0.0)
            acc2 += tl.where(jj == j, s2[:, None], 0.0)
    j_ok = jj < OW
    ws_all = (jj * W) // OW
    we_all = ((jj + 1) * W + OW - 1) // OW
    count = ((he - hs) * (we_all - ws_all)).to(tl.float32)
    count = tl.where(j_ok, count, 1.0)
    d = acc1 / count - acc2 / count + eps
    total = tl.sum(tl.where(j_ok, _pow_abs(d, p, P_KIND), 0.0), axis=1)
    if P_KIND == 1:
        dist = total
    elif P_KIND == 2:
        dist = tl.sqrt(total)
    else:
        dist = tl.where(total > 0.0, tl.exp2(tl.log2(tl.maximum(total, 1e-38)) / p), 0.0)
    tl.store(y_ptr + planes.to(tl.int64) * OH + i, dist.to(y_ptr.dtype.element_ty), mask=plane_ok)


def fused_pairwise_distance_adaptive_avg_pool2d(x1, x2, output_size, p=2.0, eps=1e-6, keepdim=False):
    if x1.dim() not in (3, 4) or tuple(x1.shape) != tuple(x2.shape):
        raise ValueError("x1 and x2 must have the same (N, C, H, W) or (C, H, W) shape")
    if not p > 0:
        raise ValueError("p must be positive")
    H, W = x1.shape[-2], x1.shape[-1]
    if isinstance(output_size, (tuple, list)):
        oh, ow = output_size
    else:
        oh, ow = output_size, output_size
    OH = H if oh is None else int(oh)
    OW = W if ow is None else int(ow)
    lead = tuple(x1.shape[:-2])
    planes = 1
    for s in lead:
        planes *= s
    y = torch.empty(lead + (OH, 1) if keepdim else lead + (OH,), dtype=x1.dtype, device=x1.device)
    if planes == 0 or OH == 0:
        return y
    a = x1.contiguous()
    b = x2.contiguous()
    pf = float(p)
    kind = 1 if pf == 1.0 else (2 if pf == 2.0 else 0)
    block_w = min(1024, max(16, triton.next_power_of_2(W)))
    block_ow = max(16, triton.next_power_of_2(OW))
    block_p = max(1, min(2048 // block_w, 4096 // block_ow, triton.next_power_of_2(planes)))
    grid = (triton.cdiv(planes, block_p), OH)
    pool_distance_kernel[grid](a, b, y, planes, H, W, OH, OW, pf, float(eps),
                               P_KIND=kind, BLOCK_P=block_p, BLOCK_W=block_w, BLOCK_OW=block_ow,
                               num_warps=4)
    return y
