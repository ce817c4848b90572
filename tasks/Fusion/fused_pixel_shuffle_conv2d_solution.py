import torch
import triton
import triton.language as tl


@triton.jit
def conv2d_pixel_shuffle_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    H, W, OH, OW, M,
    C_in_g, C_out_g,
    sxn, sxc, sxh, sxw,
    swh, sww, swo,
    syn, syc, syh, R,
    stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
    num_pid_n,
    KH: tl.constexpr, KW: tl.constexpr, HAS_BIAS: tl.constexpr, UPCAST: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # Implicit GEMM: rows = output pixels (n, oh, ow), columns = output channels of group g,
    # reduction = (kh, kw, input channel of group g); bias added, then each result is stored at its
    # pixel-shuffled place: channel co = c*R*R + i*R + j of pixel (oh, ow) goes to (c, oh*R + i, ow*R + j).
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
    rr = R * R
    c_sh = co // rr
    i_sh = (co // R) % R
    j_sh = co % R
    row = (oh * R)[:, None] + i_sh[None, :]
    col = (ow * R)[:, None] + j_sh[None, :]
    y_off = (n.to(tl.int64) * syn)[:, None] + c_sh.to(tl.int64)[None, :] * syc + row.to(tl.int64) * syh + col
    tl.store(y_ptr + y_off, acc.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


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


def fused_pixel_shuffle_conv2d(input: torch.Tensor, weight: torch.Tensor, bias=None, stride=1, padding=0, dilation=1,
                               groups=1, upscale_factor=2):
    if input.dim() != 4:
        raise ValueError("expected an (N, C, H, W) input")
    N, C_in, H, W = input.shape
    C_out, C_in_g, KH, KW = weight.shape
    if C_in != C_in_g * groups or C_out % groups != 0:
        raise ValueError("channel counts do not match groups")
    sh, sw, ph, pw, dh, dw, OH, OW = _geometry(H, W, KH, KW, stride, padding, dilation)
    C_out_g = C_out // groups
    R = int(upscale_factor)
    if R < 1 or C_out % (R * R) != 0:
        raise ValueError("pixel_shuffle needs out_channels divisible by upscale_factor squared")

    x = input.contiguous()
    wt = weight.permute(2, 3, 0, 1).contiguous()  # (kH, kW, C_out, C_in_g)
    y = torch.empty((N, C_out // (R * R), OH * R, OW * R), dtype=input.dtype, device=input.device)
    M = N * OH * OW
    if M == 0 or C_out == 0:
        return y
    BLOCK_M = 128 if M >= 128 else max(16, triton.next_power_of_2(M))
    BLOCK_N = 128 if C_out_g >= 128 else max(16, triton.next_power_of_2(C_out_g))
    BLOCK_K = min(32 if x.element_size() >= 4 else 64, max(16, triton.next_power_of_2(C_in_g)))
    num_pid_n = triton.cdiv(C_out_g, BLOCK_N)
    upcast = x.dtype == torch.bfloat16 and x.device.type == "cpu"
    conv2d_pixel_shuffle_kernel[(triton.cdiv(M, BLOCK_M) * num_pid_n, groups)](
        x, wt, bias if bias is not None else x, y,
        H, W, OH, OW, M,
        C_in_g, C_out_g,
        x.stride(0), x.stride(1), x.stride(2), x.stride(3),
        wt.stride(0), wt.stride(1), wt.stride(2),
        y.stride(0), y.stride(1), y.stride(2), R,
        sh, sw, ph, pw, dh, dw,
        num_pid_n,
        KH=KH, KW=KW, HAS_BIAS=bias is not None, UPCAST=upcast,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=8 if BLOCK_M * BLOCK_N >= 128 * 128 else 4, num_stages=3,
    )
    return y
