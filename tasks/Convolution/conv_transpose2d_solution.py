import math

import torch
import triton
import triton.language as tl


@triton.jit
def conv_transpose2d_kernel(x_ptr, w_ptr, b_ptr, y_ptr,
                            N, C_IN, H, W, C_OUT, OH, OW, CIN_G, COUT_G, KH, KW,
                            SH, SW, PH, PW, DH, DW, TH, TW, KH_STEP, KW_STEP,
                            sxn, sxc, sxh, sxw, syn, syc, syh, syw,
                            HAS_BIAS: tl.constexpr, UPCAST: tl.constexpr, HP2: tl.constexpr, WP2: tl.constexpr,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Outputs are split by stride phase: all rows oh with (oh + PH) % SH == rh use the same kernel rows
    # (those with kh*DH % SH == rh), so every tap visited contributes to every pixel of the tile
    # (no work on taps that cannot land there).
    # Within a phase and group it is an implicit GEMM: pixels x output channels, summed over
    # (valid taps, input channels).
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    z = tl.program_id(2)
    phases = SH * SW
    g = z // phases
    rh = (z % phases) // SW
    rw = z % SW
    oh_first = (rh + SH * (PH // SH + 1) - PH) % SH
    ow_first = (rw + SW * (PW // SW + 1) - PW) % SW

    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    tw = offs_m % TW
    th = (offs_m // TW) % TH
    n = offs_m // (TW * TH)
    oh = oh_first + th * SH
    ow = ow_first + tw * SW
    mask_m = (n < N) & (oh < OH) & (ow < OW)

    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_n = offs_n < COUT_G
    offs_k = tl.arange(0, BLOCK_K)

    # the kernel rows serving this phase: kh*DH = rh (mod SH), every KH_STEP-th row from the first
    # one (none: the loop is empty and the outputs get only the bias); columns likewise
    t_h = tl.arange(0, HP2)
    kh_start = tl.min(tl.where((t_h < KH_STEP) & ((t_h * DH) % SH == rh), t_h, KH), axis=0)
    t_w = tl.arange(0, WP2)
    kw_start = tl.min(tl.where((t_w < KW_STEP) & ((t_w * DW) % SW == rw), t_w, KW), axis=0)

    x_base = x_ptr + n * sxn + (g * CIN_G).to(tl.int64) * sxc
    a_cols = offs_k[None, :] * sxc
    b_offs = offs_k[:, None] * COUT_G + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kh in range(kh_start, KH, KH_STEP):
        ih = (oh + PH - kh * DH) // SH      # exact: the numerator is a multiple of SH
        ok_h = mask_m & (ih >= 0) & (ih < H)
        row = x_base + ih * sxh
        for kw in range(kw_start, KW, KW_STEP):
            iw = (ow + PW - kw * DW) // SW
            ok = (ok_h & (iw >= 0) & (iw < W))[:, None]
            a_ptrs = (row + iw * sxw)[:, None] + a_cols
            w_base = w_ptr + ((kh * KW + kw) * C_IN + g * CIN_G).to(tl.int64) * COUT_G
            for k0 in range(0, CIN_G, BLOCK_K):
                k_ok = offs_k < CIN_G - k0
                a = tl.load(a_ptrs + k0 * sxc, mask=ok & k_ok[None, :], other=0.0)
                b = tl.load(w_base + k0 * COUT_G + b_offs, mask=k_ok[:, None] & mask_n[None, :], other=0.0)
                if UPCAST:
                    # the CPU interpreter multiplies bfloat16 tiles as raw 16-bit integers
                    a = a.to(tl.float32)
                    b = b.to(tl.float32)
                acc = tl.dot(a, b, acc)

    oc = g * COUT_G + offs_n
    if HAS_BIAS:
        acc += tl.load(b_ptr + oc, mask=mask_n, other=0.0).to(tl.float32)[None, :]
    y_ptrs = (y_ptr + (n * syn + oh * syh + ow * syw)[:, None] + oc.to(tl.int64)[None, :] * syc)
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def _pair(v):
    return (int(v[0]), int(v[1])) if isinstance(v, (tuple, list)) else (int(v), int(v))


def _block(extent, lo, hi):
    return max(lo, min(hi, triton.next_power_of_2(max(extent, 1))))


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    if input.dim() != 4 or weight.dim() != 4:
        raise ValueError("input must be (N, C_in, H, W) and weight (C_in, C_out/groups, kH, kW)")
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    oph, opw = _pair(output_padding)
    dh, dw = _pair(dilation)
    n, c_in, h, w = input.shape
    c_in_w, cout_g, kh, kw = weight.shape
    if c_in_w != c_in or c_in % groups:
        raise ValueError("weight's first dimension must equal C_in, divisible by groups")
    cin_g = c_in // groups
    c_out = cout_g * groups
    oh = (h - 1) * sh - 2 * ph + dh * (kh - 1) + oph + 1
    ow = (w - 1) * sw - 2 * pw + dw * (kw - 1) + opw + 1
    x = input.contiguous()
    # (kH, kW, C_in, C_out/groups): output channels contiguous for the weight tiles
    wt = weight.permute(2, 3, 0, 1).contiguous()
    y = torch.empty((n, c_out, oh, ow), device=input.device, dtype=input.dtype)
    # along each dimension the kernel taps serving one stride phase repeat every stride/gcd(stride, dilation)
    kh_step = sh // math.gcd(sh, dh)
    kw_step = sw // math.gcd(sw, dw)
    th = triton.cdiv(oh, sh)
    tw = triton.cdiv(ow, sw)
    pixels = n * th * tw
    half = input.element_size() == 2
    block_m = _block(pixels, 16, 128)
    block_n = _block(cout_g, 16, 128)
    block_k = _block(cin_g, 16, 64 if half else 32)
    num_warps = 8 if block_m * block_n >= 128 * 128 else 4
    upcast = input.dtype == torch.bfloat16 and input.device.type == "cpu"
    grid = (triton.cdiv(pixels, block_m), triton.cdiv(cout_g, block_n), groups * sh * sw)
    b = bias if bias is not None else y
    conv_transpose2d_kernel[grid](x, wt, b, y, n, c_in, h, w, c_out, oh, ow, cin_g, cout_g, kh, kw,
                                  sh, sw, ph, pw, dh, dw, th, tw, kh_step, kw_step,
                                  x.stride(0), x.stride(1), x.stride(2), x.stride(3),
                                  y.stride(0), y.stride(1), y.stride(2), y.stride(3),
                                  HAS_BIAS=bias is not None, UPCAST=upcast,
                                  HP2=max(2, triton.next_power_of_2(kh_step)), WP2=max(2, triton.next_power_of_2(kw_step)),
                                  BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
                                  num_warps=num_warps, num_stages=2)
    return y
