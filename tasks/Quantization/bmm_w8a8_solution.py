import torch
import triton
import triton.language as tl

QMAX = tl.constexpr(127.0)
GROUP_M = 8


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
def quantize_rows_kernel(x_ptr, q_ptr, s_ptr, M, K, stride_xb, stride_xm, stride_xk,
                         BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # per-row scales of x[b] (M, K); writes int8 q (B, M, K) contiguous and scales (B, M)
    b = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    cols = tl.arange(0, BLOCK_K)
    x_rows = x_ptr + b * stride_xb + rows.to(tl.int64)[:, None] * stride_xm
    q_rows = q_ptr + (b * M + rows.to(tl.int64))[:, None] * K
    amax = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        mask = row_ok[:, None] & ((k0 + cols) < K)[None, :]
        v = tl.load(x_rows + (k0 + cols)[None, :] * stride_xk, mask=mask, other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.max(tl.abs(v), axis=1))
    scale = tl.where(amax > 0.0, amax / QMAX, 1.0)
    tl.store(s_ptr + b * M + rows, scale, mask=row_ok)
    for k0 in range(0, K, BLOCK_K):
        mask = row_ok[:, None] & ((k0 + cols) < K)[None, :]
        v = tl.load(x_rows + (k0 + cols)[None, :] * stride_xk, mask=mask, other=0.0).to(tl.float32)
        tl.store(q_rows + (k0 + cols)[None, :], _quantize(v, scale[:, None]), mask=mask)


@triton.jit
def quantize_cols_kernel(w_ptr, q_ptr, s_ptr, K, N, stride_wb, stride_wk, stride_wn,
                         BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    # per-column scales of w[b] (K, N); writes int8 q (B, K, N) contiguous and scales (B, N)
    b = tl.program_id(1).to(tl.int64)
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    ks = tl.arange(0, BLOCK_K)
    w_cols = w_ptr + b * stride_wb + cols.to(tl.int64)[None, :] * stride_wn
    q_base = q_ptr + b * K * N
    amax = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + ks
        mask = (k < K)[:, None] & col_ok[None, :]
        v = tl.load(w_cols + k.to(tl.int64)[:, None] * stride_wk, mask=mask, other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.max(tl.abs(v), axis=0))
    scale = tl.where(amax > 0.0, amax / QMAX, 1.0)
    tl.store(s_ptr + b * N + cols, scale, mask=col_ok)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + ks
        mask = (k < K)[:, None] & col_ok[None, :]
        v = tl.load(w_cols + k.to(tl.int64)[:, None] * stride_wk, mask=mask, other=0.0).to(tl.float32)
        tl.store(q_base + k.to(tl.int64)[:, None] * N + cols[None, :], _quantize(v, scale[None, :]), mask=mask)


@triton.jit
def int8_bmm_kernel(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K, stride_cb, stride_cm, stride_cn,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    GROUP_M: tl.constexpr):
    # int8 a[b] (M, K) @ int8 b[b] (K, N), int32 accumulation, dequantized by row and column scales
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
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
    a_ptrs = a_ptr + batch * M * K + offs_m.to(tl.int64)[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + batch * K * N + offs_k.to(tl.int64)[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & k_ok[None, :], other=0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    sa = tl.load(sa_ptr + batch * M + offs_m, mask=mask_m, other=0.0)
    sb = tl.load(sb_ptr + batch * N + offs_n, mask=mask_n, other=0.0)
    out = acc.to(tl.float32) * sa[:, None] * sb[None, :]
    c_ptrs = (c_ptr + batch * stride_cb + offs_m.to(tl.int64)[:, None] * stride_cm
              + offs_n.to(tl.int64)[None, :] * stride_cn)
    tl.store(c_ptrs, out.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def _block(extent, smallest, largest):
    return max(smallest, min(largest, triton.next_power_of_2(extent)))


def bmm_w8a8(input, mat2):
    if input.dim() != 3 or mat2.dim() != 3 or input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise ValueError("expected input (B, M, K) and mat2 (B, K, N)")
    bsz, m, k = input.shape
    n = mat2.shape[2]
    device = input.device
    out = torch.empty((bsz, m, n), device=device, dtype=input.dtype)
    if bsz == 0 or m == 0 or n == 0:
        return out
    xq = torch.empty((bsz, m, k), device=device, dtype=torch.int8)
    wq = torch.empty((bsz, k, n), device=device, dtype=torch.int8)
    sx = torch.empty((bsz, m), device=device, dtype=torch.float32)
    sw = torch.empty((bsz, n), device=device, dtype=torch.float32)

    # quantization tiles of about 8K elements: whole rows (up to 1024 wide) and as many rows as fit
    block_k = _block(k, 16, 1024)
    rows_per_prog = max(1, min(8192 // block_k, triton.next_power_of_2(m)))
    quantize_rows_kernel[(triton.cdiv(m, rows_per_prog), bsz)](
        input, xq, sx, m, k, input.stride(0), input.stride(1), input.stride(2),
        BLOCK_M=rows_per_prog, BLOCK_K=block_k, num_warps=8)
    cols_per_prog = _block(n, 16, 32)
    quantize_cols_kernel[(triton.cdiv(n, cols_per_prog), bsz)](
        mat2, wq, sw, k, n, mat2.stride(0), mat2.stride(1), mat2.stride(2),
        BLOCK_K=_block(k, 16, 8192 // cols_per_prog), BLOCK_N=cols_per_prog, num_warps=8)

    block_m = _block(m, 16, 128)
    block_n = _block(n, 16, 128)
    block_k = _block(k, 32, 128)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n), bsz)
    int8_bmm_kernel[grid](xq, wq, sx, sw, out, m, n, k, out.stride(0), out.stride(1), out.stride(2),
                          BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=GROUP_M,
                          num_warps=8 if block_m * block_n >= 128 * 128 else 4, num_stages=3)
    return out
