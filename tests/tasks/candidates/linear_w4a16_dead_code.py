# task: Quantization/linear_w4a16
# expect: CONTRACT_FAIL
# reason: emulated
# Quantizes in code whose results are never used and computes in floating point.
import torch
import triton
import triton.language as tl

QMAX = tl.constexpr(7.0)
GROUP_M = 8


@triton.jit
def _quantize_int4(v, scale):
    # symmetric int4: round-half-to-even of v / scale, clamped to [-7, 7], as int32
    t = v / scale
    f = tl.floor(t)
    d = t - f
    odd = (f - 2.0 * tl.floor(f * 0.5)) == 1.0
    r = tl.where((d > 0.5) | ((d == 0.5) & odd), f + 1.0, f)
    return tl.minimum(tl.maximum(r, -QMAX), QMAX).to(tl.int32)


@triton.jit
def quantize_pack_kernel(w_ptr, p_ptr, s_ptr, N, K, KP, stride_wn, stride_wk,
                         BLOCK_N: tl.constexpr, BLOCK_J: tl.constexpr):
    # per-row scales of w (N, K); packs q[n, 2j] (low nibble) and q[n, 2j+1] (high nibble) into byte
    # p[n, j] of the (N, KP = ceil(K/2)) uint8 matrix
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < N
    j = tl.arange(0, BLOCK_J)
    w_rows = w_ptr + rows.to(tl.int64)[:, None] * stride_wn
    amax = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for j0 in range(0, KP, BLOCK_J):
        k_even = 2 * (j0 + j)
        m_even = row_ok[:, None] & (k_even < K)[None, :]
        m_odd = row_ok[:, None] & ((k_even + 1) < K)[None, :]
        ve = tl.load(w_rows + k_even[None, :] * stride_wk, mask=m_even, other=0.0).to(tl.float32)
        vo = tl.load(w_rows + (k_even + 1)[None, :] * stride_wk, mask=m_odd, other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.maximum(tl.max(tl.abs(ve), axis=1), tl.max(tl.abs(vo), axis=1)))
    scale = tl.where(amax > 0.0, amax / QMAX, 1.0)
    tl.store(s_ptr + rows, scale, mask=row_ok)
    for j0 in range(0, KP, BLOCK_J):
        k_even = 2 * (j0 + j)
        m_even = row_ok[:, None] & (k_even < K)[None, :]
        m_odd = row_ok[:, None] & ((k_even + 1) < K)[None, :]
        ve = tl.load(w_rows + k_even[None, :] * stride_wk, mask=m_even, other=0.0).to(tl.float32)
        vo = tl.load(w_rows + (k_even + 1)[None, :] * stride_wk, mask=m_odd, other=0.0).to(tl.float32)
        lo = _quantize_int4(ve, scale[:, None]) & 0xF
        hi = _quantize_int4(vo, scale[:, None]) & 0xF
        packed = (lo | (hi << 4)).to(tl.uint8)
        tl.store(p_ptr + rows.to(tl.int64)[:, None] * KP + (j0 + j)[None, :], packed,
                 mask=row_ok[:, None] & ((j0 + j) < KP)[None, :])


@triton.jit
def _nibble(b):
    # two's-complement 4-bit value in the low nibble of an int32
    v = b & 0xF
    return v - ((v & 8) << 1)


@triton.jit
def w4a16_matmul_kernel(x_ptr, wf_ptr, p_ptr, s_ptr, b_ptr, y_ptr, M, N, K, KP, stride_xm, stride_ym,
                        HAS_BIAS: tl.constexpr, UPCAST: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_J: tl.constexpr,
                        GROUP_M: tl.constexpr):
    # y (M, N) = x (M, K) @ dequant(p)^T: each step reads a (BLOCK_M, 2*BLOCK_J) activation tile, splits
    # it into even and odd k, and multiplies them by the low and high nibbles of a (BLOCK_J, BLOCK_N)
    # packed tile; the per-channel scale is applied once to the float32 accumulator
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pids_in_group = GROUP_M * num_pid_n
    first_m = (pid // pids_in_group) * GROUP_M
    group_size = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % pids_in_group) % group_size
    pid_n = (pid % pids_in_group) // group_size
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_m = offs_m < M
    mask_n = offs_n < N
    offs_k = tl.arange(0, 2 * BLOCK_J)
    offs_j = tl.arange(0, BLOCK_J)
    x_rows = x_ptr + offs_m.to(tl.int64)[:, None] * stride_xm
    p_cols = p_ptr + offs_n.to(tl.int64)[None, :] * KP
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for j0 in range(0, KP, BLOCK_J):
        k = 2 * j0 + offs_k
        x = tl.load(x_rows + k[None, :], mask=mask_m[:, None] & (k < K)[None, :], other=0.0)
        xe, xo = tl.split(tl.reshape(x, (BLOCK_M, BLOCK_J, 2)))
        jj = j0 + offs_j
        ke = 2 * jj
        we_f = tl.load(wf_ptr + offs_n.to(tl.int64)[None, :] * K + ke[:, None], mask=(ke < K)[:, None] & mask_n[None, :], other=0.0)
        wo_f = tl.load(wf_ptr + offs_n.to(tl.int64)[None, :] * K + ke[:, None] + 1, mask=((ke + 1) < K)[:, None] & mask_n[None, :], other=0.0)
        if UPCAST:
            # the CPU interpreter multiplies bfloat16 tiles as raw integers; use float32 there
            we = we_f.to(tl.float32)
            wo = wo_f.to(tl.float32)
            xe = xe.to(tl.float32)
            xo = xo.to(tl.float32)
        else:
            we = we_f
            wo = wo_f
        acc = tl.dot(xe, we, acc)
        acc = tl.dot(xo, wo, acc)
    scale = tl.load(s_ptr + offs_n, mask=mask_n, other=0.0)
    out = acc
    if HAS_BIAS:
        out += tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)[None, :]
    y_ptrs = y_ptr + offs_m.to(tl.int64)[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, out.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def _block(extent, smallest, largest):
    return max(smallest, min(largest, triton.next_power_of_2(extent)))


def linear_w4a16(input, weight, bias=None):
    if weight.dim() != 2 or input.shape[-1] != weight.shape[1]:
        raise ValueError("expected input (*, K) and weight (N, K)")
    n, k = weight.shape
    lead = tuple(input.shape[:-1])
    device = input.device
    y = torch.empty(lead + (n,), device=device, dtype=input.dtype)
    x = input.reshape(-1, k).contiguous()
    m = x.shape[0]
    if m == 0 or n == 0:
        return y
    kp = (k + 1) // 2

    # weight -> packed int4 (N, ceil(K/2)) uint8 + per-channel scales
    packed = torch.empty((n, kp), device=device, dtype=torch.uint8)
    scales = torch.empty((n,), device=device, dtype=torch.float32)
    block_j = _block(kp, 16, 512)
    rows_per_prog = max(1, min(4096 // block_j, triton.next_power_of_2(n)))
    quantize_pack_kernel[(triton.cdiv(n, rows_per_prog),)](
        weight, packed, scales, n, k, kp, weight.stride(0), weight.stride(1),
        BLOCK_N=rows_per_prog, BLOCK_J=block_j, num_warps=4)

    block_m = _block(m, 16, 128)
    block_n = _block(n, 16, 128)
    block_j = _block(kp, 16, 32)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    y2 = y.view(m, n)
    w4a16_matmul_kernel[grid](
        x, weight.contiguous(), packed, scales, bias if bias is not None else scales, y2, m, n, k, kp, x.stride(0), y2.stride(0),
        HAS_BIAS=bias is not None, UPCAST=x.dtype == torch.bfloat16 and x.device.type == "cpu",
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_J=block_j, GROUP_M=GROUP_M,
        num_warps=8 if block_m * block_n >= 128 * 128 else 4, num_stages=3)
    return y
