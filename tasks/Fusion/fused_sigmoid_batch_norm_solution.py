import torch
import triton
import triton.language as tl

TILE = 4096            # elements per tile in the statistics and normalize kernels
TARGET_PROGRAMS = 2048
MAX_SPLIT = 256        # partial statistics per channel, merged by one program per channel block


@triton.jit
def bn_partial_stats_kernel(x_ptr, cnt_ptr, mean_ptr, m2_ptr, N, C, S, rows_per_split,
                            BLOCK_N: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_S: tl.constexpr):
    # Program (channel block, split) reduces rows [split * rows_per_split, ...) of the (N, C, S) view
    # to per-channel (count, mean, M2), merging tiles with Chan's parallel update (no cancellation).
    pid_c = tl.program_id(0)
    pid_split = tl.program_id(1)
    c = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    c_mask = c < C
    n_start = pid_split * rows_per_split
    n_end = tl.minimum(n_start + rows_per_split, N)
    cnt = tl.zeros([BLOCK_C], dtype=tl.float32)
    mean = tl.zeros([BLOCK_C], dtype=tl.float32)
    m2 = tl.zeros([BLOCK_C], dtype=tl.float32)
    for n0 in range(n_start, n_end, BLOCK_N):
        n = n0 + tl.arange(0, BLOCK_N)
        for s0 in range(0, S, BLOCK_S):
            s = s0 + tl.arange(0, BLOCK_S)
            offs = (n[:, None, None].to(tl.int64) * C + c[None, :, None]) * S + s[None, None, :]
            mask = (n[:, None, None] < n_end) & c_mask[None, :, None] & (s[None, None, :] < S)
            x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
            t_cnt = tl.sum(tl.sum(mask.to(tl.float32), axis=2), axis=0)
            t_mean = tl.sum(tl.sum(x, axis=2), axis=0) / tl.maximum(t_cnt, 1.0)
            d = tl.where(mask, x - t_mean[None, :, None], 0.0)
            t_m2 = tl.sum(tl.sum(d * d, axis=2), axis=0)
            total = tl.maximum(cnt + t_cnt, 1.0)
            delta = t_mean - mean
            mean = mean + delta * (t_cnt / total)
            m2 = m2 + t_m2 + delta * delta * (cnt * t_cnt / total)
            cnt = cnt + t_cnt
    out = pid_split * C + c
    tl.store(cnt_ptr + out, cnt, mask=c_mask)
    tl.store(mean_ptr + out, mean, mask=c_mask)
    tl.store(m2_ptr + out, m2, mask=c_mask)


@triton.jit
def bn_finalize_kernel(cnt_ptr, pmean_ptr, pm2_ptr, rm_ptr, rv_ptr, w_ptr, b_ptr,
                       center_ptr, scale_ptr, shift_ptr, C, SPLIT, momentum, eps,
                       TRAINING: tl.constexpr, HAS_W: tl.constexpr, HAS_B: tl.constexpr,
                       BLOCK_SPLIT: tl.constexpr, BLOCK_C: tl.constexpr):
    # Per channel: merge the partial statistics (training) or read the running ones, update the
    # running buffers, and fold weight and bias into (center, scale, shift).
    c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    c_mask = c < C
    rm = tl.load(rm_ptr + c, mask=c_mask, other=0.0).to(tl.float32)
    rv = tl.load(rv_ptr + c, mask=c_mask, other=1.0).to(tl.float32)
    if TRAINING:
        sp = tl.arange(0, BLOCK_SPLIT)
        idx = sp[:, None] * C + c[None, :]
        m = (sp[:, None] < SPLIT) & c_mask[None, :]
        cnt = tl.load(cnt_ptr + idx, mask=m, other=0.0)
        pmean = tl.load(pmean_ptr + idx, mask=m, other=0.0)
        pm2 = tl.load(pm2_ptr + idx, mask=m, other=0.0)
        total = tl.maximum(tl.sum(cnt, axis=0), 1.0)
        mean = tl.sum(cnt * pmean, axis=0) / total
        dev = tl.where(m, pmean - mean[None, :], 0.0)
        m2 = tl.sum(pm2 + cnt * dev * dev, axis=0)
        var = m2 / total
        unbiased = m2 / (total - 1.0)
        tl.store(rm_ptr + c, ((1.0 - momentum) * rm + momentum * mean).to(rm_ptr.dtype.element_ty), mask=c_mask)
        tl.store(rv_ptr + c, ((1.0 - momentum) * rv + momentum * unbiased).to(rv_ptr.dtype.element_ty),
                 mask=c_mask)
    else:
        mean = rm
        var = rv
    scale = 1.0 / tl.sqrt(var + eps)
    if HAS_W:
        scale = scale * tl.load(w_ptr + c, mask=c_mask, other=1.0).to(tl.float32)
    if HAS_B:
        shift = tl.load(b_ptr + c, mask=c_mask, other=0.0).to(tl.float32)
    else:
        shift = tl.zeros([BLOCK_C], dtype=tl.float32)
    tl.store(center_ptr + c, mean, mask=c_mask)
    tl.store(scale_ptr + c, scale, mask=c_mask)
    tl.store(shift_ptr + c, shift, mask=c_mask)


@triton.jit
def bn_sigmoid_kernel(x_ptr, y_ptr, center_ptr, scale_ptr, shift_ptr, N, C, S, c_blocks, s_blocks,
                          BLOCK_N: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_S: tl.constexpr):
    # normalize a (BLOCK_N, BLOCK_C, BLOCK_S) tile of the (N, C, S) view, then sigmoid
    pid = tl.program_id(0)
    pid_s = pid % s_blocks
    rest = pid // s_blocks
    pid_c = rest % c_blocks
    pid_n = rest // c_blocks
    n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    s = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    c_mask = c < C
    center = tl.load(center_ptr + c, mask=c_mask, other=0.0)
    scale = tl.load(scale_ptr + c, mask=c_mask, other=0.0)
    shift = tl.load(shift_ptr + c, mask=c_mask, other=0.0)
    offs = (n[:, None, None].to(tl.int64) * C + c[None, :, None]) * S + s[None, None, :]
    mask = (n[:, None, None] < N) & c_mask[None, :, None] & (s[None, None, :] < S)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    z = (x - center[None, :, None]) * scale[None, :, None] + shift[None, :, None]
    y = tl.sigmoid(z)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def _tiles(N, C, S):
    block_s = min(triton.next_power_of_2(S), 1024)
    block_c = min(triton.next_power_of_2(C), max(1, 256 // block_s))
    block_n = max(1, min(triton.next_power_of_2(N), TILE // (block_s * block_c)))
    return block_n, block_c, block_s


def fused_sigmoid_batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
                             momentum=0.1, eps=1e-5):
    x = input
    if x.dim() < 2:
        raise ValueError("batch norm expects an input of shape (N, C, ...)")
    xc = x.contiguous()
    N, C = xc.shape[0], xc.shape[1]
    S = xc.numel() // max(1, N * C)
    y = torch.empty_like(xc)
    if xc.numel() == 0:
        return y
    if training and N * S < 2:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {tuple(x.shape)}")
    device = xc.device
    block_n, block_c, block_s = _tiles(N, C, S)
    c_blocks = triton.cdiv(C, block_c)
    center = torch.empty(C, device=device, dtype=torch.float32)
    scale = torch.empty(C, device=device, dtype=torch.float32)
    shift = torch.empty(C, device=device, dtype=torch.float32)
    if training:
        n_blocks = triton.cdiv(N, block_n)
        split = max(1, min(n_blocks, MAX_SPLIT, triton.cdiv(TARGET_PROGRAMS, c_blocks)))
        rows_per_split = triton.cdiv(n_blocks, split) * block_n
        split = triton.cdiv(N, rows_per_split)
        cnt = torch.empty((split, C), device=device, dtype=torch.float32)
        pmean = torch.empty((split, C), device=device, dtype=torch.float32)
        pm2 = torch.empty((split, C), device=device, dtype=torch.float32)
        bn_partial_stats_kernel[(c_blocks, split)](
            xc, cnt, pmean, pm2, N, C, S, rows_per_split,
            BLOCK_N=block_n, BLOCK_C=block_c, BLOCK_S=block_s, num_warps=8)
    else:
        split = 1
        cnt = pmean = pm2 = center  # unused in eval mode
    block_split = triton.next_power_of_2(split)
    fin_block_c = max(1, min(triton.next_power_of_2(C), 4096 // block_split, 128))
    bn_finalize_kernel[(triton.cdiv(C, fin_block_c),)](
        cnt, pmean, pm2, running_mean, running_var,
        weight if weight is not None else center, bias if bias is not None else center,
        center, scale, shift, C, split, momentum, eps,
        TRAINING=bool(training), HAS_W=weight is not None, HAS_B=bias is not None,
        BLOCK_SPLIT=block_split, BLOCK_C=fin_block_c, num_warps=4)
    s_blocks = triton.cdiv(S, block_s)
    grid = (triton.cdiv(N, block_n) * c_blocks * s_blocks,)
    bn_sigmoid_kernel[grid](xc, y, center, scale, shift, N, C, S, c_blocks, s_blocks,
                                BLOCK_N=block_n, BLOCK_C=block_c, BLOCK_S=block_s, num_warps=8)
    return y.view(x.shape)
