import torch
import triton
import triton.language as tl


@triton.jit
def conv2d_ln_stats_kernel(
    x_ptr, w_ptr, b_ptr, z_ptr, cnt_ptr, mean_ptr, m2_ptr,
    H, W, OH, OW, S, P,
    C_in_g, C_out_g, groups,
    sxn, sxc, sxh, sxw,
    swh, sww, swo,
    szn, szc,
    stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
    num_pid_n,
    KH: tl.constexpr, KW: tl.constexpr, HAS_BIAS: tl.constexpr, UPCAST: tl.constexpr,
    PRECISION: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # Implicit GEMM over one image n (grid axis 2): rows = its output pixels, columns = output channels
    # of group g, reduction = (kh, kw, input channel of group g). The float32 result goes to z and the
    # tile's (count, mean, M2) to one of the image's P partial-statistics slots.
    pid = tl.program_id(0)
    g = tl.program_id(1)
    n = tl.program_id(2)
    pid_n = pid % num_pid_n
    pid_s = pid // num_pid_n

    offs_m = pid_s * BLOCK_M + tl.arange(0, BLOCK_M)
    mask_m = offs_m < S
    oh = offs_m // OW
    ow = offs_m % OW
    ih0 = oh * stride_h - pad_h
    iw0 = ow * stride_w - pad_w
    x_row = n.to(tl.int64) * sxn + (g * C_in_g).to(tl.int64) * sxc

    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_n = offs_n < C_out_g
    co = g * C_out_g + offs_n  # weight is laid out (kH, kW, C_out, C_in_g): reduction dim contiguous

    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    num_cb = tl.cdiv(C_in_g, BLOCK_K)
    for t in range(0, KH * KW * num_cb):
        khw = t // num_cb
        c0 = (t % num_cb) * BLOCK_K
        kh = khw // KW
        kw = khw % KW
        ih = ih0 + kh * dil_h
        iw = iw0 + kw * dil_w
        valid = mask_m & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        x_sp = x_row + ih * sxh + iw * sxw
        c = c0 + offs_k
        mask_c = c < C_in_g
        # input tile loaded as (channels, pixels): neighbouring threads read neighbouring pixels
        a_t = tl.load(x_ptr + c[:, None] * sxc + x_sp[None, :],
                      mask=mask_c[:, None] & valid[None, :], other=0.0)
        a = tl.trans(a_t)
        b = tl.load(w_ptr + kh * swh + kw * sww + co[None, :] * swo + c[:, None],
                    mask=mask_c[:, None] & mask_n[None, :], other=0.0)
        if UPCAST:
            # the CPU interpreter multiplies bfloat16 tiles as raw 16-bit integers; widen them there
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)

    if HAS_BIAS:
        acc += tl.load(b_ptr + co, mask=mask_n, other=0.0).to(tl.float32)[None, :]
    tile = mask_m[:, None] & mask_n[None, :]
    z_off = n.to(tl.int64) * szn + offs_m
    tl.store(z_ptr + z_off[:, None] + co[None, :].to(tl.int64) * szc, acc, mask=tile)

    t_cnt = tl.sum(tl.sum(tile.to(tl.float32), axis=1), axis=0)
    t_mean = tl.sum(tl.sum(tl.where(tile, acc, 0.0), axis=1), axis=0) / t_cnt
    d = tl.where(tile, acc - t_mean, 0.0)
    t_m2 = tl.sum(tl.sum(d * d, axis=1), axis=0)
    slot = n.to(tl.int64) * P + (pid_s * groups + g) * num_pid_n + pid_n
    tl.store(cnt_ptr + slot, t_cnt)
    tl.store(mean_ptr + slot, t_mean)
    tl.store(m2_ptr + slot, t_m2)


@triton.jit
def ln_finalize_kernel(cnt_ptr, mean_ptr, m2_ptr, center_ptr, rstd_ptr, P, eps, BLOCK_P: tl.constexpr):
    # Per image: merge its P partial (count, mean, M2) with Chan's update, then 1/sqrt(var + eps).
    n = tl.program_id(0)
    base = n.to(tl.int64) * P
    cnt = tl.sum(tl.zeros((BLOCK_P,), dtype=tl.float32), axis=0)
    mean = cnt
    m2 = cnt
    for p0 in range(0, P, BLOCK_P):
        p = p0 + tl.arange(0, BLOCK_P)
        m = p < P
        p_cnt = tl.load(cnt_ptr + base + p, mask=m, other=0.0)
        p_mean = tl.load(mean_ptr + base + p, mask=m, other=0.0)
        p_m2 = tl.load(m2_ptr + base + p, mask=m, other=0.0)
        b_cnt = tl.sum(p_cnt, axis=0)
        b_mean = tl.sum(p_cnt * p_mean, axis=0) / tl.maximum(b_cnt, 1.0)
        dev = tl.where(m, p_mean - b_mean, 0.0)
        b_m2 = tl.sum(p_m2 + p_cnt * dev * dev, axis=0)
        total = tl.maximum(cnt + b_cnt, 1.0)
        delta = b_mean - mean
        mean = mean + delta * (b_cnt / total)
        m2 = m2 + b_m2 + delta * delta * (cnt * b_cnt / total)
        cnt = cnt + b_cnt
    tl.store(center_ptr + n, mean)
    tl.store(rstd_ptr + n, 1.0 / tl.sqrt(m2 / tl.maximum(cnt, 1.0) + eps))


@triton.jit
def ln_silu_apply_kernel(z_ptr, y_ptr, center_ptr, rstd_ptr, total, per_image,
                         WIDE: tl.constexpr, BLOCK: tl.constexpr):
    # element-wise over the flattened (N, C_out * OH * OW) result: normalize by image, then SiLU
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if WIDE:
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < total
    n = offs // per_image
    z = tl.load(z_ptr + offs, mask=ok, other=0.0)
    mean = tl.load(center_ptr + n, mask=ok, other=0.0)
    rstd = tl.load(rstd_ptr + n, mask=ok, other=0.0)
    v = (z - mean) * rstd
    y = v * tl.sigmoid(v)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=ok)


def _pair(v):
    if isinstance(v, (tuple, list)):
        return int(v[0]), int(v[1])
    return int(v), int(v)


def _geometry(H, W, KH, KW, stride, padding, dilation):
    sh, sw = _pair(stride)
    dh, dw = _pair(dilation)
    if isinstance(padding, str):
        if padding == "valid":
            return sh, sw, 0, 0, dh, dw, H - dh * (KH - 1), W - dw * (KW - 1)
        if padding == "same":
            if (sh, sw) != (1, 1):
                raise ValueError("padding='same' needs stride 1")
            # torch puts the extra element of an odd total padding at the bottom/right: reads there are masked
            return sh, sw, dh * (KH - 1) // 2, dw * (KW - 1) // 2, dh, dw, H, W
        raise ValueError(f"unknown padding {padding!r}")
    ph, pw = _pair(padding)
    OH = (H + 2 * ph - dh * (KH - 1) - 1) // sh + 1
    OW = (W + 2 * pw - dw * (KW - 1) - 1) // sw + 1
    return sh, sw, ph, pw, dh, dw, OH, OW


def fused_silu_layer_norm_conv2d(x: torch.Tensor, weight: torch.Tensor, conv_weight: torch.Tensor,
                                 conv_bias: torch.Tensor = None, conv_stride: int = 1, conv_padding: int = 0,
                                 conv_dilation: int = 1, conv_groups: int = 1, ln_eps: float = 1e-5):
    # `weight` does not enter the result: the normalization has no affine step
    if x.dim() != 4:
        raise ValueError("expected an (N, C, H, W) input")
    groups = conv_groups
    N, C_in, H, W = x.shape
    C_out, C_in_g, KH, KW = conv_weight.shape
    if C_in != C_in_g * groups or C_out % groups != 0:
        raise ValueError("channel counts do not match groups")
    sh, sw, ph, pw, dh, dw, OH, OW = _geometry(H, W, KH, KW, conv_stride, conv_padding, conv_dilation)
    C_out_g = C_out // groups
    S = OH * OW

    xc = x.contiguous()
    wt = conv_weight.permute(2, 3, 0, 1).contiguous()  # (kH, kW, C_out, C_in_g)
    y = torch.empty((N, C_out, OH, OW), dtype=x.dtype, device=x.device)
    if y.numel() == 0:
        return y
    device = x.device
    z = torch.empty((N, C_out, OH, OW), dtype=torch.float32, device=device)
    BLOCK_M = 128 if S >= 128 else max(16, triton.next_power_of_2(S))
    BLOCK_N = 128 if C_out_g >= 128 else max(16, triton.next_power_of_2(C_out_g))
    BLOCK_K = min(32 if xc.element_size() >= 4 else 64, max(16, triton.next_power_of_2(C_in_g)))
    num_pid_n = triton.cdiv(C_out_g, BLOCK_N)
    tiles_s = triton.cdiv(S, BLOCK_M)
    P = tiles_s * groups * num_pid_n
    upcast = xc.dtype == torch.bfloat16 and xc.device.type == "cpu"
    # Normalizing divides by the image's spread, which magnifies the products' rounding; float32
    # inputs use the 3-pass TF32 split (close to float32 accuracy on tensor cores).
    precision = "tf32x3" if xc.dtype == torch.float32 else "tf32"
    cnt = torch.empty((N, P), dtype=torch.float32, device=device)
    pmean = torch.empty_like(cnt)
    pm2 = torch.empty_like(cnt)
    conv2d_ln_stats_kernel[(tiles_s * num_pid_n, groups, N)](
        xc, wt, conv_bias if conv_bias is not None else xc, z, cnt, pmean, pm2,
        H, W, OH, OW, S, P,
        C_in_g, C_out_g, groups,
        xc.stride(0), xc.stride(1), xc.stride(2), xc.stride(3),
        wt.stride(0), wt.stride(1), wt.stride(2),
        z.stride(0), z.stride(1),
        sh, sw, ph, pw, dh, dw,
        num_pid_n,
        KH=KH, KW=KW, HAS_BIAS=conv_bias is not None, UPCAST=upcast, PRECISION=precision,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=8 if BLOCK_M * BLOCK_N >= 128 * 128 else 4, num_stages=3,
    )
    center = torch.empty(N, dtype=torch.float32, device=device)
    rstd = torch.empty(N, dtype=torch.float32, device=device)
    block_p = max(16, min(1024, triton.next_power_of_2(P)))
    ln_finalize_kernel[(N,)](cnt, pmean, pm2, center, rstd, P, float(ln_eps), BLOCK_P=block_p, num_warps=4)
    total = y.numel()
    block = 2048
    ln_silu_apply_kernel[(triton.cdiv(total, block),)](z, y, center, rstd, total, C_out * S,
                                                       WIDE=total >= 2**31, BLOCK=block, num_warps=8)
    return y
