import torch
import triton
import triton.language as tl

GROUP_M = 8
ROW_BLOCK = 4096   # elements of a softmax or layer-norm tile (rows x columns)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, r_ptr, M, N, K, rows_per_batch,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_rb, stride_rm, stride_rn,
                  RESIDUAL: tl.constexpr, UPCAST: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # c (float32, (M, N) contiguous) = a @ b [+ residual, read through its (batch, row, col) strides]
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
    a_ptrs = a_ptr + offs_m.to(tl.int64)[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n.to(tl.int64)[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0.0)
        if UPCAST:
            # the CPU interpreter multiplies bfloat16 tiles as raw 16-bit integers; widen them there
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    mask = mask_m[:, None] & mask_n[None, :]
    if RESIDUAL:
        batch = (offs_m // rows_per_batch).to(tl.int64)
        row = (offs_m % rows_per_batch).to(tl.int64)
        r_ptrs = r_ptr + (batch * stride_rb + row * stride_rm)[:, None] + offs_n.to(tl.int64)[None, :] * stride_rn
        acc += tl.load(r_ptrs, mask=mask, other=0.0).to(tl.float32)
    c_ptrs = c_ptr + offs_m.to(tl.int64)[:, None] * N + offs_n[None, :]
    tl.store(c_ptrs, acc, mask=mask)


@triton.jit
def softmax_dropout_kernel(z_ptr, d_ptr, M, K, p, scale, seed, DROPOUT: tl.constexpr,
                           BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # BLOCK_M rows of the (M, K) float32 logits: softmax, then dropout keyed by the element's flat index
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    cols = tl.arange(0, BLOCK_K)
    m = tl.full((BLOCK_M,), -1.0e30, dtype=tl.float32)
    s = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + cols
        mask = row_ok[:, None] & (k < K)[None, :]
        z = tl.load(z_ptr + rows[:, None] * K + k[None, :], mask=mask, other=float("-inf"))
        m_new = tl.maximum(m, tl.max(z, axis=1))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(z - m_new[:, None]), axis=1)
        m = m_new
    inv = 1.0 / s
    for k0 in range(0, K, BLOCK_K):
        k = k0 + cols
        mask = row_ok[:, None] & (k < K)[None, :]
        flat = rows[:, None] * K + k[None, :]
        z = tl.load(z_ptr + flat, mask=mask, other=float("-inf"))
        prob = tl.exp(z - m[:, None]) * inv[:, None]
        if DROPOUT:
            prob = tl.where(tl.rand(seed, flat) >= p, prob * scale, 0.0)
        tl.store(d_ptr + flat, prob.to(d_ptr.dtype.element_ty), mask=mask)


@triton.jit
def layer_norm_kernel(u_ptr, y_ptr, M, N, eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # BLOCK_M rows of the (M, N) float32 pre-normalization values: two-pass mean and biased variance
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    cols = tl.arange(0, BLOCK_N)
    base = u_ptr + rows[:, None] * N
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        n = n0 + cols
        mask = row_ok[:, None] & (n < N)[None, :]
        acc += tl.sum(tl.load(base + n[None, :], mask=mask, other=0.0), axis=1)
    mean = acc / N
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        n = n0 + cols
        mask = row_ok[:, None] & (n < N)[None, :]
        d = tl.where(mask, tl.load(base + n[None, :], mask=mask, other=0.0) - mean[:, None], 0.0)
        acc += tl.sum(d * d, axis=1)
    rstd = 1.0 / tl.sqrt(acc / N + eps)
    for n0 in range(0, N, BLOCK_N):
        n = n0 + cols
        mask = row_ok[:, None] & (n < N)[None, :]
        u = tl.load(base + n[None, :], mask=mask, other=0.0)
        y = (u - mean[:, None]) * rstd[:, None]
        tl.store(y_ptr + rows[:, None] * N + n[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


def _rows_tile(m, length):
    block = min(ROW_BLOCK, triton.next_power_of_2(length))
    return max(1, min(triton.next_power_of_2(m), ROW_BLOCK // block)), block


def _block(extent, largest):
    return max(16, min(largest, triton.next_power_of_2(extent)))


def _matmul(a, b, c, residual, rows_per_batch, upcast):
    m, k = a.shape
    n = b.shape[1]
    half = a.element_size() == 2
    block_m = _block(m, 128)
    block_n = _block(n, 128)
    block_k = _block(k, 64 if half else 32)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    if residual is None:
        r, rs = c, (0, 0, 0)
    else:
        r, rs = residual, (residual.stride(0), residual.stride(1), residual.stride(2))
    matmul_kernel[grid](a, b, c, r, m, n, k, rows_per_batch,
                        a.stride(0), a.stride(1), b.stride(0), b.stride(1), rs[0], rs[1], rs[2],
                        RESIDUAL=residual is not None, UPCAST=upcast,
                        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=GROUP_M,
                        num_warps=8 if block_m * block_n >= 128 * 128 else 4, num_stages=3)


def fused_transformer_block(input, weight1, weight2, residual, dropout_p=0.1, eps=1e-5, *, out=None):
    if input.dim() not in (2, 3):
        raise ValueError("input must be (N, D_in) or (B, N, D_in)")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError("dropout_p must be in [0, 1)")
    d_in, d_k = weight1.shape
    d_out = weight2.shape[1]
    x3 = input if input.dim() == 3 else input.unsqueeze(0)
    batch, n_rows, _ = x3.shape
    m = batch * n_rows
    device, dtype = input.device, input.dtype
    out_shape = tuple(input.shape[:-1]) + (d_out,)
    y = torch.empty(out_shape, device=device, dtype=dtype)
    if y.numel() == 0:
        return y
    x = x3.reshape(m, d_in)
    upcast = dtype == torch.bfloat16 and device.type == "cpu"
    # 1) logits in float32
    logits = torch.empty((m, d_k), device=device, dtype=torch.float32)
    _matmul(x, weight1, logits, None, n_rows, upcast)
    # 2) softmax and dropout, stored in the input's dtype for the second product
    dropout = dropout_p > 0.0
    seed = torch.randint(0, 2**31 - 1, (1,)).item() if dropout else 0
    dropped = torch.empty((m, d_k), device=device, dtype=dtype)
    block_m, block_k = _rows_tile(m, d_k)
    softmax_dropout_kernel[(triton.cdiv(m, block_m),)](
        logits, dropped, m, d_k, float(dropout_p), 1.0 / (1.0 - dropout_p), seed,
        DROPOUT=dropout, BLOCK_M=block_m, BLOCK_K=block_k, num_warps=8)
    # 3) second product plus the (broadcast) residual, in float32
    res3 = residual.expand(out_shape)
    if res3.dim() == 2:
        res3 = res3.unsqueeze(0)
    pre = torch.empty((m, d_out), device=device, dtype=torch.float32)
    _matmul(dropped, weight2, pre, res3, n_rows, upcast)
    # 4) layer normalization over the last dim
    block_m, block_n = _rows_tile(m, d_out)
    layer_norm_kernel[(triton.cdiv(m, block_m),)](pre, y, m, d_out, float(eps), BLOCK_M=block_m, BLOCK_N=block_n,
                                                  num_warps=8)
    if out is not None:
        out.copy_(y)
        return out
    return y
