import torch
import triton
import triton.language as tl


@triton.jit
def cosine_map_kernel(x1_ptr, x2_ptr, sim_ptr, C, HW, eps, num_pid_p,
                      BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    # Program (n, pixel block): loops over channels with pixels contiguous in memory.
    pid = tl.program_id(0)
    n = (pid // num_pid_p).to(tl.int64)
    pix = (pid % num_pid_p) * BLOCK_P + tl.arange(0, BLOCK_P)
    pix_ok = pix < HW
    chans = tl.arange(0, BLOCK_C)
    base = n * C * HW
    dot = tl.zeros((BLOCK_C, BLOCK_P), dtype=tl.float32)
    sq1 = tl.zeros((BLOCK_C, BLOCK_P), dtype=tl.float32)
    sq2 = tl.zeros((BLOCK_C, BLOCK_P), dtype=tl.float32)
    for c0 in range(0, C, BLOCK_C):
        c = c0 + chans
        mask = (c < C)[:, None] & pix_ok[None, :]
        offs = base + c.to(tl.int64)[:, None] * HW + pix[None, :]
        a = tl.load(x1_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(x2_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        dot += a * b
        sq1 += a * a
        sq2 += b * b
    norm1 = tl.maximum(tl.sqrt(tl.sum(sq1, axis=0)), eps)
    norm2 = tl.maximum(tl.sqrt(tl.sum(sq2, axis=0)), eps)
    sim = tl.sum(dot, axis=0) / (norm1 * norm2)
    tl.store(sim_ptr + n * HW + pix, sim, mask=pix_ok)


@triton.jit
def avg_pool2d_kernel(sim_ptr, y_ptr, total, H, W, OH, OW, stride, padding, inv_area,
                      K: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < total
    ow = offs % OW
    r = offs // OW
    oh = r % OH
    n = r // OH
    h0 = oh * stride - padding
    w0 = ow * stride - padding
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, K):
        h = h0 + i
        row_ok = ok & (h >= 0) & (h < H)
        for j in range(0, K):
            w = w0 + j
            m = row_ok & (w >= 0) & (w < W)
            acc += tl.load(sim_ptr + (n * H + h) * W + w, mask=m, other=0.0)
    tl.store(y_ptr + offs, (acc * inv_area).to(y_ptr.dtype.element_ty), mask=ok)


def fused_avg_pool2d_cosine_similarity(x1, x2, kernel_size, stride=None, padding=0, eps=1e-8):
    if x1.dim() != 4 or tuple(x1.shape) != tuple(x2.shape):
        raise ValueError("x1 and x2 must both have shape (N, C, H, W)")
    k = int(kernel_size[0]) if isinstance(kernel_size, (tuple, list)) else int(kernel_size)
    if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0):
        s = k
    else:
        s = int(stride[0]) if isinstance(stride, (tuple, list)) else int(stride)
    p = int(padding[0]) if isinstance(padding, (tuple, list)) else int(padding)
    a = x1.contiguous()
    b = x2.contiguous()
    N, C, H, W = a.shape
    OH = (H + 2 * p - k) // s + 1
    OW = (W + 2 * p - k) // s + 1
    y = torch.empty((N, 1, OH, OW), dtype=x1.dtype, device=x1.device)
    if y.numel() == 0:
        return y
    HW = H * W
    sim = torch.empty((N, H, W), dtype=torch.float32, device=x1.device)
    block_p = min(triton.next_power_of_2(HW), 128)
    block_c = min(triton.next_power_of_2(C), 16)
    num_pid_p = triton.cdiv(HW, block_p)
    cosine_map_kernel[(N * num_pid_p,)](a, b, sim, C, HW, float(eps), num_pid_p,
                                        BLOCK_C=block_c, BLOCK_P=block_p, num_warps=4)
    total = y.numel()
    block = 256
    avg_pool2d_kernel[(triton.cdiv(total, block),)](sim, y, total, H, W, OH, OW, s, p, 1.0 / (k * k),
                                                    K=k, BLOCK=block, num_warps=4)
    return y
