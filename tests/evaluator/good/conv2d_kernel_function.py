# task: Convolution/conv2d
# style: entry named kernel_function, implicit GEMM with tl.dot(allow_tf32=False), tl.program_id(axis=1)/(axis=2) for channel block and group, x.stride() tuples, asserts with messages, torch.empty((N, C, OH, OW), device=..., dtype=...)
import torch
import triton
import triton.language as tl


@triton.jit
def conv2d_igemm_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    N, C_in_g, H, W, C_out_g, OH, OW, KH, KW,
    sxn, sxc, sxh, sxw,
    swo, swc, swh, sww,
    syn, syc, syh, syw,
    stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
    HAS_BIAS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(axis=0)   # block of output pixels (n, oh, ow)
    pid_n = tl.program_id(axis=1)   # block of output channels inside the group
    g = tl.program_id(axis=2)       # group

    M = N * OH * OW
    K = C_in_g * KH * KW
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m_ok = offs_m < M
    n_ok = offs_n < C_out_g

    ow = offs_m % OW
    t = offs_m // OW
    oh = t % OH
    nb = (t // OH).to(tl.int64)
    ih0 = oh * stride_h - pad_h
    iw0 = ow * stride_w - pad_w
    oc = g * C_out_g + offs_n

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        k_ok = offs_k < K
        kw = offs_k % KW
        kt = offs_k // KW
        kh = kt % KH
        ci = kt // KH

        ih = ih0[:, None] + kh[None, :] * dil_h
        iw = iw0[:, None] + kw[None, :] * dil_w
        x_mask = m_ok[:, None] & k_ok[None, :] & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        x_off = nb[:, None] * sxn + (g * C_in_g + ci[None, :]) * sxc + ih * sxh + iw * sxw
        a = tl.load(x_ptr + x_off, mask=x_mask, other=0.0)

        w_off = oc[None, :] * swo + ci[:, None] * swc + kh[:, None] * swh + kw[:, None] * sww
        b = tl.load(w_ptr + w_off, mask=k_ok[:, None] & n_ok[None, :], other=0.0)

        acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, allow_tf32=False)

    if HAS_BIAS:
        acc += tl.load(b_ptr + oc, mask=n_ok, other=0.0).to(tl.float32)[None, :]

    y_off = nb[:, None] * syn + oc[None, :] * syc + oh[:, None] * syh + ow[:, None] * syw
    tl.store(y_ptr + y_off, acc.to(y_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


def _pair(v):
    return (int(v[0]), int(v[1])) if isinstance(v, (tuple, list)) else (int(v), int(v))


def kernel_function(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    assert input.dim() == 4, f"input must be (N, C_in, H, W), got {tuple(input.shape)}"
    assert weight.dim() == 4, f"weight must be (C_out, C_in/groups, kH, kW), got {tuple(weight.shape)}"
    N, C_in, H, W = input.shape
    C_out, C_in_g, KH, KW = weight.shape
    assert C_in % groups == 0 and C_out % groups == 0, "channels must divide into groups"
    assert C_in_g * groups == C_in, f"weight expects {C_in_g * groups} input channels, input has {C_in}"
    if bias is not None:
        assert bias.shape == (C_out,), "bias must be (C_out,)"

    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    dh, dw = _pair(dilation)
    OH = (H + 2 * ph - dh * (KH - 1) - 1) // sh + 1
    OW = (W + 2 * pw - dw * (KW - 1) - 1) // sw + 1
    assert OH > 0 and OW > 0, "the kernel does not fit the padded input"

    y = torch.empty((N, C_out, OH, OW), device=input.device, dtype=input.dtype)
    C_out_g = C_out // groups
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 32, 32
    grid = (triton.cdiv(N * OH * OW, BLOCK_M), triton.cdiv(C_out_g, BLOCK_N), groups)
    conv2d_igemm_kernel[grid](
        input, weight, bias if bias is not None else y, y,
        N, C_in_g, H, W, C_out_g, OH, OW, KH, KW,
        *input.stride(), *weight.stride(), *y.stride(),
        sh, sw, ph, pw, dh, dw,
        HAS_BIAS=bias is not None,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=4,
    )
    return y
