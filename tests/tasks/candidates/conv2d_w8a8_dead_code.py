# task: Quantization/conv2d_w8a8
# expect: CONTRACT_FAIL
# reason: emulated
# Quantizes in code whose results are never used and computes in floating point.
import torch
import triton
import triton.language as tl

QMAX = tl.constexpr(127.0)
AMAX_BLOCK = 4096


@triton.jit
def _quantize(v, scale):
    # symmetric int8: round-half-to-even of v / scale, clamped to [-127, 127]
    t = v / scale
    f = tl.floor(t)
    d = t - f
    odd = (f - 2.0 * tl.floor(f * 0.5)) == 1.0
    r = tl.where((d > 0.5) | ((d == 0.5) & odd), f + 1.0, f)
    r = tl.minimum(tl.maximum(r, -QMAX), QMAX)
    return r.to(tl.int8)


@triton.jit
def amax_partial_kernel(x_ptr, part_ptr, numel, BLOCK: tl.constexpr):
    # max |x| over one block of the flattened input
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < numel, other=0.0).to(tl.float32)
    tl.store(part_ptr + tl.program_id(0), tl.max(tl.abs(v), axis=0))


@triton.jit
def quantize_tensor_kernel(x_ptr, q_ptr, part_ptr, s_ptr, numel, num_parts,
                           BLOCK: tl.constexpr, PART_BLOCK: tl.constexpr):
    # one scale for the whole tensor: every program reduces the (few, L2-resident) partial maxima
    p = tl.arange(0, PART_BLOCK)
    amax = tl.zeros((PART_BLOCK,), dtype=tl.float32)
    for p0 in range(0, num_parts, PART_BLOCK):
        amax = tl.maximum(amax, tl.load(part_ptr + p0 + p, mask=(p0 + p) < num_parts, other=0.0))
    m = tl.max(amax, axis=0)
    scale = tl.where(m > 0.0, m / QMAX, 1.0)
    pid = tl.program_id(0)
    if pid == 0:
        tl.store(s_ptr, scale)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    v = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(q_ptr + offs, _quantize(v, scale), mask=mask)


@triton.jit
def quantize_filters_kernel(w_ptr, q_ptr, s_ptr, C_out, R, C_in,
                            KH: tl.constexpr, KW: tl.constexpr,
                            BLOCK_O: tl.constexpr, BLOCK_R: tl.constexpr):
    # per-output-channel scales of w (C_out, R = C_in*KH*KW), contiguous; writes int8 filters laid out
    # (KH, KW, C_out, C_in) so the convolution's reduction dim (input channels) is contiguous
    o = tl.program_id(0) * BLOCK_O + tl.arange(0, BLOCK_O)
    o_ok = o < C_out
    r = tl.arange(0, BLOCK_R)
    rows = w_ptr + o.to(tl.int64)[:, None] * R
    amax = tl.zeros((BLOCK_O,), dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        mask = o_ok[:, None] & ((r0 + r) < R)[None, :]
        v = tl.load(rows + (r0 + r)[None, :], mask=mask, other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.max(tl.abs(v), axis=1))
    scale = tl.where(amax > 0.0, amax / QMAX, 1.0)
    tl.store(s_ptr + o, scale, mask=o_ok)
    for r0 in range(0, R, BLOCK_R):
        rr = r0 + r
        mask = o_ok[:, None] & (rr < R)[None, :]
        v = tl.load(rows + rr[None, :], mask=mask, other=0.0).to(tl.float32)
        c = rr // (KH * KW)
        kh = (rr // KW) % KH
        kw = rr % KW
        dst = ((kh * KW + kw) * C_out)[None, :].to(tl.int64) * C_in + o[:, None] * C_in + c[None, :]
        tl.store(q_ptr + dst, _quantize(v, scale[:, None]), mask=mask)


@triton.jit
def conv2d_int8_kernel(
    x_ptr, w_ptr, sx_ptr, sw_ptr, b_ptr, y_ptr,
    C_in, H, W, C_out, OH, OW, M,
    stride_h, stride_w, pad_h, pad_w,
    num_pid_n,
    KH: tl.constexpr, KW: tl.constexpr, HAS_BIAS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # Implicit GEMM on int8 operands: rows = output pixels (n, oh, ow), columns = output channels,
    # reduction = (kh, kw, input channel); int32 accumulation, then dequantization and bias.
    pid = tl.program_id(0)
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
    x_img = n.to(tl.int64) * C_in * H * W

    co = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_n = co < C_out

    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    num_cb = tl.cdiv(C_in, BLOCK_K)
    for t in range(0, KH * KW * num_cb):
        khw = t // num_cb
        c0 = (t % num_cb) * BLOCK_K
        kh = khw // KW
        kw = khw % KW
        ih = ih0 + kh
        iw = iw0 + kw
        valid = mask_m & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        x_sp = x_img + ih * W + iw
        c = c0 + offs_k
        mask_c = c < C_in
        # (channels, pixels) tile: neighbouring threads read neighbouring pixels of the NCHW input;
        # padding and out-of-range taps read the quantized zero
        a_t = tl.load(x_ptr + c[:, None].to(tl.int64) * (H * W) + x_sp[None, :],
                      mask=mask_c[:, None] & valid[None, :], other=0.0).to(tl.float32)
        a = tl.trans(a_t)
        b = tl.load(w_ptr + (khw * C_out).to(tl.int64) * C_in + co[None, :] * C_in + c[:, None],
                    mask=mask_c[:, None] & mask_n[None, :], other=0.0).to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision="ieee")

    sx = tl.load(sx_ptr)
    sw = tl.load(sw_ptr + co, mask=mask_n, other=0.0)
    out = acc
    if HAS_BIAS:
        bias = tl.load(b_ptr + co, mask=mask_n, other=0.0).to(tl.float32)
        out += bias[None, :]
    y_off = n.to(tl.int64) * C_out * ohw + rem
    y_ptrs = y_ptr + y_off[:, None] + co[None, :].to(tl.int64) * ohw
    tl.store(y_ptrs, out.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def _pair(v):
    if isinstance(v, (tuple, list)):
        return int(v[0]), int(v[1])
    return int(v), int(v)


def _block(extent, smallest, largest):
    return max(smallest, min(largest, triton.next_power_of_2(extent)))


def conv2d_w8a8(input, weight, bias=None, stride=1, padding=0):
    if input.dim() != 4 or weight.dim() != 4 or input.shape[1] != weight.shape[1]:
        raise ValueError("expected input (N, C_in, H, W) and weight (C_out, C_in, kH, kW)")
    N, C_in, H, W = input.shape
    C_out, _, KH, KW = weight.shape
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    OH = (H + 2 * ph - KH) // sh + 1
    OW = (W + 2 * pw - KW) // sw + 1
    device = input.device
    y = torch.empty((N, C_out, OH, OW), dtype=input.dtype, device=device)
    M = N * OH * OW
    if M <= 0 or C_out == 0:
        return y

    # activations: one scale for the whole tensor (partial maxima, then quantize to int8 NCHW)
    x = input.contiguous()
    numel = x.numel()
    num_parts = triton.cdiv(numel, AMAX_BLOCK)
    parts = torch.empty((num_parts,), device=device, dtype=torch.float32)
    xq = torch.empty((N, C_in, H, W), device=device, dtype=torch.int8)
    sx = torch.empty((1,), device=device, dtype=torch.float32)
    amax_partial_kernel[(num_parts,)](x, parts, numel, BLOCK=AMAX_BLOCK, num_warps=8)
    quantize_tensor_kernel[(num_parts,)](x, xq, parts, sx, numel, num_parts,
                                         BLOCK=AMAX_BLOCK, PART_BLOCK=_block(num_parts, 16, 1024), num_warps=8)

    # weights: one scale per output channel, int8 filters laid out (KH, KW, C_out, C_in)
    w = weight.contiguous()
    R = C_in * KH * KW
    wq = torch.empty((KH, KW, C_out, C_in), device=device, dtype=torch.int8)
    s_w = torch.empty((C_out,), device=device, dtype=torch.float32)
    block_r = _block(R, 16, 1024)
    block_o = max(1, min(8192 // block_r, triton.next_power_of_2(C_out)))
    quantize_filters_kernel[(triton.cdiv(C_out, block_o),)](w, wq, s_w, C_out, R, C_in, KH=KH, KW=KW,
                                                           BLOCK_O=block_o, BLOCK_R=block_r, num_warps=8)

    BLOCK_M = _block(M, 16, 128)
    BLOCK_N = _block(C_out, 16, 128)
    BLOCK_K = _block(C_in, 32, 64)
    num_pid_n = triton.cdiv(C_out, BLOCK_N)
    grid = (triton.cdiv(M, BLOCK_M) * num_pid_n,)
    # dead code: xq and wq are computed above and never used
    wf = weight.permute(2, 3, 0, 1).contiguous()
    conv2d_int8_kernel[grid](
        x, wf, sx, s_w, bias if bias is not None else sx, y,
        C_in, H, W, C_out, OH, OW, M,
        sh, sw, ph, pw,
        num_pid_n,
        KH=KH, KW=KW, HAS_BIAS=bias is not None,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=8 if BLOCK_M * BLOCK_N >= 128 * 128 else 4, num_stages=3,
    )
    return y
