import torch
import triton
import triton.language as tl


@triton.jit
def conv2d_bn_kernel(
    x_ptr, w_ptr, b_ptr, z_ptr, y_ptr, cnt_ptr, mean_ptr, m2_ptr,
    rm_ptr, rv_ptr, g_ptr, beta_ptr, eps,
    H, W, OH, OW, M, C_out,
    C_in_g, C_out_g,
    sxn, sxc, sxh, sxw,
    swh, sww, swo,
    syn, syc,
    stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
    num_pid_n,
    KH: tl.constexpr, KW: tl.constexpr, HAS_BIAS: tl.constexpr, TRAINING: tl.constexpr,
    HAS_GAMMA: tl.constexpr, HAS_BETA: tl.constexpr, UPCAST: tl.constexpr, PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # Implicit GEMM: rows = output pixels (n, oh, ow), columns = output channels of group g,
    # reduction = (kh, kw, input channel of group g).
    # TRAINING: the float32 result goes to z, and the tile's per-channel (count, mean, M2) over its
    # pixels to row pid_m of the partial-statistics buffers. Otherwise the running statistics and the
    # affine parameters normalize the accumulator, and ReLU'd values go straight to y.
    pid = tl.program_id(0)
    g = tl.program_id(1)
    pid_n = pid % num_pid_n
    pid_m = pid // num_pid_n

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    mask_m = offs_m < M
    ohw = OH * OW
    n = offs_m // ohw
    rem = offs_m % ohw
    oh = rem // OW
    ow = rem % OW
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
    y_off = n.to(tl.int64) * syn + rem
    out_off = y_off[:, None] + co[None, :].to(tl.int64) * syc
    if TRAINING:
        tl.store(z_ptr + out_off, acc, mask=tile)
        t_cnt = tl.sum(mask_m.to(tl.float32), axis=0)
        t_mean = tl.sum(tl.where(tile, acc, 0.0), axis=0) / t_cnt
        d = tl.where(tile, acc - t_mean[None, :], 0.0)
        t_m2 = tl.sum(d * d, axis=0)
        part = pid_m.to(tl.int64) * C_out + co
        tl.store(cnt_ptr + part, tl.zeros_like(t_mean) + t_cnt, mask=mask_n)
        tl.store(mean_ptr + part, t_mean, mask=mask_n)
        tl.store(m2_ptr + part, t_m2, mask=mask_n)
    else:
        rm = tl.load(rm_ptr + co, mask=mask_n, other=0.0).to(tl.float32)
        rv = tl.load(rv_ptr + co, mask=mask_n, other=1.0).to(tl.float32)
        scale = 1.0 / tl.sqrt(rv + eps)
        if HAS_GAMMA:
            scale = scale * tl.load(g_ptr + co, mask=mask_n, other=1.0).to(tl.float32)
        shift = -rm * scale
        if HAS_BETA:
            shift += tl.load(beta_ptr + co, mask=mask_n, other=0.0).to(tl.float32)
        v = acc * scale[None, :] + shift[None, :]
        v = tl.where(v > 0.0, v, 0.0)
        tl.store(y_ptr + out_off, v.to(y_ptr.dtype.element_ty), mask=tile)


@triton.jit
def bn_finalize_kernel(cnt_ptr, mean_ptr, m2_ptr, g_ptr, beta_ptr, rm_ptr, rv_ptr, scale_ptr, shift_ptr,
                       C, T, eps, momentum,
                       HAS_GAMMA: tl.constexpr, HAS_BETA: tl.constexpr, UPDATE: tl.constexpr,
                       BLOCK_T: tl.constexpr, BLOCK_C: tl.constexpr):
    # Per channel: merge the T per-tile (count, mean, M2) with Chan's update; fold the statistics and
    # the affine parameters into one scale and shift; update the running statistics.
    c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    c_ok = c < C
    cnt = tl.zeros((BLOCK_C,), dtype=tl.float32)
    mean = tl.zeros((BLOCK_C,), dtype=tl.float32)
    m2 = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for t0 in range(0, T, BLOCK_T):
        t = t0 + tl.arange(0, BLOCK_T)
        m = (t < T)[:, None] & c_ok[None, :]
        idx = t.to(tl.int64)[:, None] * C + c[None, :]
        p_cnt = tl.load(cnt_ptr + idx, mask=m, other=0.0)
        p_mean = tl.load(mean_ptr + idx, mask=m, other=0.0)
        p_m2 = tl.load(m2_ptr + idx, mask=m, other=0.0)
        b_cnt = tl.sum(p_cnt, axis=0)
        b_mean = tl.sum(p_cnt * p_mean, axis=0) / tl.maximum(b_cnt, 1.0)
        dev = tl.where(m, p_mean - b_mean[None, :], 0.0)
        b_m2 = tl.sum(p_m2 + p_cnt * dev * dev, axis=0)
        total = tl.maximum(cnt + b_cnt, 1.0)
        delta = b_mean - mean
        mean = mean + delta * (b_cnt / total)
        m2 = m2 + b_m2 + delta * delta * (cnt * b_cnt / total)
        cnt = cnt + b_cnt
    var = m2 / tl.maximum(cnt, 1.0)
    scale = 1.0 / tl.sqrt(var + eps)
    if HAS_GAMMA:
        scale = scale * tl.load(g_ptr + c, mask=c_ok, other=1.0).to(tl.float32)
    shift = -mean * scale
    if HAS_BETA:
        shift += tl.load(beta_ptr + c, mask=c_ok, other=0.0).to(tl.float32)
    tl.store(scale_ptr + c, scale, mask=c_ok)
    tl.store(shift_ptr + c, shift, mask=c_ok)
    if UPDATE:
        rm = tl.load(rm_ptr + c, mask=c_ok, other=0.0).to(tl.float32)
        rv = tl.load(rv_ptr + c, mask=c_ok, other=0.0).to(tl.float32)
        unbiased = m2 / tl.maximum(cnt - 1.0, 1.0)
        rm = (1.0 - momentum) * rm + momentum * mean
        rv = (1.0 - momentum) * rv + momentum * unbiased
        tl.store(rm_ptr + c, rm.to(rm_ptr.dtype.element_ty), mask=c_ok)
        tl.store(rv_ptr + c, rv.to(rv_ptr.dtype.element_ty), mask=c_ok)


@triton.jit
def bn_relu_apply_kernel(z_ptr, y_ptr, scale_ptr, shift_ptr, total, C, S,
                         WIDE: tl.constexpr, BLOCK: tl.constexpr):
    # element-wise over the (N, C, S) result: scale and shift by channel, then ReLU
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if WIDE:
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < total
    c = (offs // S) % C
    z = tl.load(z_ptr + offs, mask=ok, other=0.0)
    scale = tl.load(scale_ptr + c, mask=ok, other=0.0)
    shift = tl.load(shift_ptr + c, mask=ok, other=0.0)
    y = z * scale + shift
    y = tl.where(y > 0.0, y, 0.0)
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


def fused_relu_batch_norm_conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
                                 running_mean=None, running_var=None, bn_weight=None, bn_bias=None, training=False,
                                 momentum=0.1, eps=1e-5, inplace=False):
    if input.dim() != 4:
        raise ValueError("expected an (N, C, H, W) input")
    if not training and (running_mean is None or running_var is None):
        raise ValueError("training=False needs running_mean and running_var")
    N, C_in, H, W = input.shape
    C_out, C_in_g, KH, KW = weight.shape
    if C_in != C_in_g * groups or C_out % groups != 0:
        raise ValueError("channel counts do not match groups")
    sh, sw, ph, pw, dh, dw, OH, OW = _geometry(H, W, KH, KW, stride, padding, dilation)
    C_out_g = C_out // groups
    S = OH * OW
    M = N * S
    if training and M < 2:
        raise ValueError("batch normalization in training needs more than one value per channel")

    x = input.contiguous()
    wt = weight.permute(2, 3, 0, 1).contiguous()  # (kH, kW, C_out, C_in_g)
    y = torch.empty((N, C_out, OH, OW), dtype=input.dtype, device=input.device)
    if M == 0 or C_out == 0:
        return y
    device = input.device
    BLOCK_M = 128 if M >= 128 else max(16, triton.next_power_of_2(M))
    BLOCK_N = 128 if C_out_g >= 128 else max(16, triton.next_power_of_2(C_out_g))
    BLOCK_K = min(32 if x.element_size() >= 4 else 64, max(16, triton.next_power_of_2(C_in_g)))
    num_pid_n = triton.cdiv(C_out_g, BLOCK_N)
    tiles_m = triton.cdiv(M, BLOCK_M)
    upcast = x.dtype == torch.bfloat16 and x.device.type == "cpu"
    # Normalizing divides by each channel's spread, which magnifies the products' rounding; float32
    # inputs use the 3-pass TF32 split (close to float32 accuracy on tensor cores).
    precision = "tf32x3" if x.dtype == torch.float32 else "tf32"
    if training:
        z = torch.empty((N, C_out, OH, OW), dtype=torch.float32, device=device)
        cnt = torch.empty((tiles_m, C_out), dtype=torch.float32, device=device)
        pmean = torch.empty_like(cnt)
        pm2 = torch.empty_like(cnt)
    else:
        z, cnt, pmean, pm2 = y, y, y, y  # unused
    rm = running_mean if running_mean is not None else y
    rv = running_var if running_var is not None else y
    gamma = bn_weight if bn_weight is not None else y
    beta = bn_bias if bn_bias is not None else y
    conv2d_bn_kernel[(tiles_m * num_pid_n, groups)](
        x, wt, bias if bias is not None else x, z, y, cnt, pmean, pm2,
        rm, rv, gamma, beta, float(eps),
        H, W, OH, OW, M, C_out,
        C_in_g, C_out_g,
        x.stride(0), x.stride(1), x.stride(2), x.stride(3),
        wt.stride(0), wt.stride(1), wt.stride(2),
        y.stride(0), y.stride(1),
        sh, sw, ph, pw, dh, dw,
        num_pid_n,
        KH=KH, KW=KW, HAS_BIAS=bias is not None, TRAINING=bool(training),
        HAS_GAMMA=bn_weight is not None, HAS_BETA=bn_bias is not None, UPCAST=upcast, PRECISION=precision,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=8 if BLOCK_M * BLOCK_N >= 128 * 128 else 4, num_stages=3,
    )
    if not training:
        return y
    scale = torch.empty(C_out, dtype=torch.float32, device=device)
    shift = torch.empty(C_out, dtype=torch.float32, device=device)
    update = running_mean is not None and running_var is not None
    block_c = min(64, triton.next_power_of_2(C_out))
    block_t = max(1, min(64, triton.next_power_of_2(tiles_m)))
    bn_finalize_kernel[(triton.cdiv(C_out, block_c),)](
        cnt, pmean, pm2, gamma, beta, rm, rv, scale, shift, C_out, tiles_m, float(eps), float(momentum),
        HAS_GAMMA=bn_weight is not None, HAS_BETA=bn_bias is not None, UPDATE=update,
        BLOCK_T=block_t, BLOCK_C=block_c, num_warps=4)
    total = y.numel()
    block = 2048
    bn_relu_apply_kernel[(triton.cdiv(total, block),)](z, y, scale, shift, total, C_out, S,
                                                       WIDE=total >= 2**31, BLOCK=block, num_warps=8)
    return y
