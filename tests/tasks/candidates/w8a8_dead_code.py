# task: Quantization/matmul_w8a8
# expect: CONTRACT_FAIL
# reason: emulated int8 pipeline
# Quantizes activations and weights in code whose results are never used, then multiplies the
# float inputs with tl.dot: the approximation metrics pass, the manual-quantization gate does not.
import torch
import triton
import triton.language as tl

QMAX = tl.constexpr(127.0)
GROUP_M = 8


@triton.jit
def _quantize(v, scale):
    # symmetric int8: round-to-nearest (ties to even) of v / scale, clamped to [-127, 127]
    t = v / scale
    f = tl.floor(t)
    d = t - f
    odd = (f - 2.0 * tl.floor(f * 0.5)) == 1.0
    r = tl.where((d > 0.5) | ((d == 0.5) & odd), f + 1.0, f)
    r = tl.minimum(tl.maximum(r, -QMAX), QMAX)
    return r.to(tl.int8)


@triton.jit
def quantize_rows_kernel(x_ptr, q_ptr, s_ptr, M, K, stride_xm, stride_xk,
                         BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # per-row scales of x (M, K): scale = max|row| / 127; writes int8 q (M, K) row-major
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    cols = tl.arange(0, BLOCK_K)
    x_rows = x_ptr + rows.to(tl.int64)[:, None] * stride_xm
    q_rows = q_ptr + rows.to(tl.int64)[:, None] * K
    amax = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        mask = row_ok[:, None] & ((k0 + cols) < K)[None, :]
        v = tl.load(x_rows + (k0 + cols)[None, :] * stride_xk, mask=mask, other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.max(tl.abs(v), axis=1))
    scale = tl.where(amax > 0.0, amax / QMAX, 1.0)
    tl.store(s_ptr + rows, scale, mask=row_ok)
    for k0 in range(0, K, BLOCK_K):
        mask = row_ok[:, None] & ((k0 + cols) < K)[None, :]
        v = tl.load(x_rows + (k0 + cols)[None, :] * stride_xk, mask=mask, other=0.0).to(tl.float32)
        tl.store(q_rows + (k0 + cols)[None, :], _quantize(v, scale[:, None]), mask=mask)


@triton.jit
def quantize_cols_kernel(w_ptr, q_ptr, s_ptr, K, N, stride_wk, stride_wn,
                         BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    # per-column (output-channel) scales of w (K, N); writes int8 q (K, N) row-major
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    ks = tl.arange(0, BLOCK_K)
    w_cols = w_ptr + cols.to(tl.int64)[None, :] * stride_wn
    amax = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + ks
        mask = (k < K)[:, None] & col_ok[None, :]
        v = tl.load(w_cols + k.to(tl.int64)[:, None] * stride_wk, mask=mask, other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.max(tl.abs(v), axis=0))
    scale = tl.where(amax > 0.0, amax / QMAX, 1.0)
    tl.store(s_ptr + cols, scale, mask=col_ok)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + ks
        mask = (k < K)[:, None] & col_ok[None, :]
        v = tl.load(w_cols + k.to(tl.int64)[:, None] * stride_wk, mask=mask, other=0.0).to(tl.float32)
        tl.store(q_ptr + k.to(tl.int64)[:, None] * N + cols[None, :], _quantize(v, scale[None, :]), mask=mask)


@triton.jit
def int8_matmul_kernel(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K, stride_cm, stride_cn,
                       xf_ptr, wf_ptr, stride_xm, stride_xk, stride_wk, stride_wn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr):
    # int8 (M, K) @ int8 (K, N) with int32 accumulation, dequantized by row and column scales
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
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    a_ptrs = a_ptr + offs_m.to(tl.int64)[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k.to(tl.int64)[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    xf_ptrs = xf_ptr + offs_m.to(tl.int64)[:, None] * stride_xm + offs_k[None, :] * stride_xk
    wf_ptrs = wf_ptr + offs_k.to(tl.int64)[:, None] * stride_wk + offs_n[None, :] * stride_wn
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        a = tl.load(xf_ptrs, mask=mask_m[:, None] & k_ok[None, :], other=0.0).to(tl.float32)
        b = tl.load(wf_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0.0).to(tl.float32)
        qa = _quantize(a, tl.load(sa_ptr + offs_m, mask=mask_m, other=1.0)[:, None])  # never used
        qb = _quantize(b, tl.load(sb_ptr + offs_n, mask=mask_n, other=1.0)[None, :])  # never used
        acc = tl.dot(a, b, acc)
        xf_ptrs += BLOCK_K * stride_xk
        wf_ptrs += BLOCK_K * stride_wk
    sa = tl.load(sa_ptr + offs_m, mask=mask_m, other=0.0)
    sb = tl.load(sb_ptr + offs_n, mask=mask_n, other=0.0)
    out = acc
    c_ptrs = c_ptr + offs_m.to(tl.int64)[:, None] * stride_cm + offs_n.to(tl.int64)[None, :] * stride_cn
    tl.store(c_ptrs, out.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def _block(extent, smallest, largest):
    return max(smallest, min(largest, triton.next_power_of_2(extent)))


def matmul_w8a8(input, weight):
    if input.dim() != 2 or weight.dim() != 2 or input.shape[1] != weight.shape[0]:
        raise ValueError("expected input (M, K) and weight (K, N)")
    m, k = input.shape
    n = weight.shape[1]
    device = input.device
    out = torch.empty((m, n), device=device, dtype=input.dtype)
    if m == 0 or n == 0:
        return out
    xq = torch.empty((m, k), device=device, dtype=torch.int8)
    wq = torch.empty((k, n), device=device, dtype=torch.int8)
    sx = torch.empty((m,), device=device, dtype=torch.float32)
    sw = torch.empty((n,), device=device, dtype=torch.float32)

    rows_per_prog = 4
    quantize_rows_kernel[(triton.cdiv(m, rows_per_prog),)](
        input, xq, sx, m, k, input.stride(0), input.stride(1),
        BLOCK_M=rows_per_prog, BLOCK_K=_block(k, 16, 1024), num_warps=4)
    cols_per_prog = _block(n, 16, 32)
    quantize_cols_kernel[(triton.cdiv(n, cols_per_prog),)](
        weight, wq, sw, k, n, weight.stride(0), weight.stride(1),
        BLOCK_K=_block(k, 16, 128), BLOCK_N=cols_per_prog, num_warps=4)

    block_m = _block(m, 16, 128)
    block_n = _block(n, 16, 128)
    block_k = _block(k, 32, 128)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    int8_matmul_kernel[grid](xq, wq, sx, sw, out, m, n, k, out.stride(0), out.stride(1),
                             input, weight, input.stride(0), input.stride(1), weight.stride(0), weight.stride(1),
                             BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=GROUP_M,
                             num_warps=8 if block_m * block_n >= 128 * 128 else 4, num_stages=3)
    return out
