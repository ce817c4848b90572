import torch
import triton
import triton.language as tl


@triton.jit
def conv2d_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    H, W, OH, OW, M,
    C_in_g, C_out_g,
    sxn, sxc, sxh, sxw,
    swh, sww, swo,
    syn, syc,
    stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
    num_pid_n,
    KH: tl.constexpr, KW: tl.constexpr, HAS_BIAS: tl.constexpr, UPCAST: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # Implicit GEMM: rows = output pixels (n, oh, ow), columns = output channels of group g,
    # reduction = (kh, kw, input channel of group g); bias added to the accumulator.
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
        acc = tl.dot(a, b, acc)

    if HAS_BIAS:
        acc += tl.load(b_ptr + co, mask=mask_n, other=0.0).to(tl.float32)[None, :]
    y_off = n.to(tl.int64) * syn + rem
    y_ptrs = y_ptr + y_off[:, None] + co[None, :].to(tl.int64) * syc
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


@triton.jit
def max_pool2d_relu_kernel(z_ptr, y_ptr, total, H, W, PH, PW, sh, sw, ph, pw, dh, dw,
                           KH: tl.constexpr, KW: tl.constexpr, BLOCK: tl.constexpr):
    # one lane per output element of the flattened (planes, PH, PW) output; padding taps read -inf
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    pw_i = offs % PW
    ph_i = (offs // PW) % PH
    plane = offs // (PW * PH)
    h0 = ph_i * sh - ph
    w0 = pw_i * sw - pw
    base = z_ptr + plane * H * W
    best = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    for kh in tl.static_range(KH):
        ih = h0 + kh * dh
        row_ok = mask & (ih >= 0) & (ih < H)
        for kw in tl.static_range(KW):
            iw = w0 + kw * dw
            ok = row_ok & (iw >= 0) & (iw < W)
            v = tl.load(base + ih * W + iw, mask=ok, other=float("-inf")).to(tl.float32)
            best = tl.maximum(best, v)
    y = tl.where(best > 0.0, best, 0.0)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


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


def _pool_len(size, k, s, p, d, ceil_mode):
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def fused_relu_max_pool2d_conv2d(input, weight, bias=None, conv_stride=1, conv_padding=0, conv_dilation=1,
                                 conv_groups=1, pool_kernel_size=2, pool_stride=None, pool_padding=0, pool_dilation=1,
                                 pool_ceil_mode=False, inplace=False):
    stride, padding, dilation, groups = conv_stride, conv_padding, conv_dilation, conv_groups
    if input.dim() != 4:
        raise ValueError("expected an (N, C, H, W) input")
    N, C_in, H, W = input.shape
    C_out, C_in_g, KH, KW = weight.shape
    if C_in != C_in_g * groups or C_out % groups != 0:
        raise ValueError("channel counts do not match groups")
    sh, sw, ph, pw, dh, dw, OH, OW = _geometry(H, W, KH, KW, stride, padding, dilation)
    C_out_g = C_out // groups

    x = input.contiguous()
    wt = weight.permute(2, 3, 0, 1).contiguous()  # (kH, kW, C_out, C_in_g)
    pkh, pkw = _pair(pool_kernel_size)
    psh, psw = _pair(pool_stride) if pool_stride is not None else (pkh, pkw)
    pph, ppw = _pair(pool_padding)
    pdh, pdw = _pair(pool_dilation)
    if pph * 2 > pkh or ppw * 2 > pkw:
        raise ValueError("pool padding should be at most half of the pool kernel size")
    PH = _pool_len(OH, pkh, psh, pph, pdh, bool(pool_ceil_mode))
    PW = _pool_len(OW, pkw, psw, ppw, pdw, bool(pool_ceil_mode))
    if PH <= 0 or PW <= 0:
        raise ValueError("the pooled output would be empty")
    out = torch.empty((N, C_out, PH, PW), dtype=input.dtype, device=input.device)
    M = N * OH * OW
    if M == 0 or C_out == 0:
        return out
    # the convolution's result in the input's dtype (as the reference rounds it); max and ReLU commute
    # with that rounding, so the pooled values match
    y = torch.empty((N, C_out, OH, OW), dtype=input.dtype, device=input.device)
    BLOCK_M = 128 if M >= 128 else max(16, triton.next_power_of_2(M))
    BLOCK_N = 128 if C_out_g >= 128 else max(16, triton.next_power_of_2(C_out_g))
    BLOCK_K = min(32 if x.element_size() >= 4 else 64, max(16, triton.next_power_of_2(C_in_g)))
    num_pid_n = triton.cdiv(C_out_g, BLOCK_N)
    upcast = x.dtype == torch.bfloat16 and x.device.type == "cpu"
    conv2d_kernel[(triton.cdiv(M, BLOCK_M) * num_pid_n, groups)](
        x, wt, bias if bias is not None else x, y,
        H, W, OH, OW, M,
        C_in_g, C_out_g,
        x.stride(0), x.stride(1), x.stride(2), x.stride(3),
        wt.stride(0), wt.stride(1), wt.stride(2),
        y.stride(0), y.stride(1),
        sh, sw, ph, pw, dh, dw,
        num_pid_n,
        KH=KH, KW=KW, HAS_BIAS=bias is not None, UPCAST=upcast,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=8 if BLOCK_M * BLOCK_N >= 128 * 128 else 4, num_stages=3,
    )
    total = out.numel()
    block = 1024 if total >= 1024 else max(16, triton.next_power_of_2(total))
    max_pool2d_relu_kernel[(triton.cdiv(total, block),)](
        y, out, total, OH, OW, PH, PW, psh, psw, pph, ppw, pdh, pdw,
        KH=pkh, KW=pkw, BLOCK=block, num_warps=4)
    return out
