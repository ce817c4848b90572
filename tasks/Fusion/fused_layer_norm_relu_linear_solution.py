import torch
import triton
import triton.language as tl

GROUP_M = 8
MAX_FUSED_N = 256      # out_features up to this: one kernel holds whole rows and normalizes in registers
MAX_ROW_BLOCK = 8192   # rows up to this length are normalized from a single load


@triton.jit
def _linear_tile(x_ptr, w_ptr, b_ptr, offs_m, offs_n, M, N, K,
                 stride_xm, stride_xk, stride_wn, stride_wk,
                 HAS_BIAS: tl.constexpr, UPCAST: tl.constexpr, PRECISION: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # relu(x[offs_m, :] @ w[offs_n, :].T + b[offs_n]) in float32
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    x_ptrs = x_ptr + offs_m.to(tl.int64)[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n.to(tl.int64)[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        a = tl.load(x_ptrs, mask=mask_m[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(w_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0.0)
        if UPCAST:
            # the CPU interpreter multiplies bfloat16 tiles as raw 16-bit integers; widen them there
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk
    if HAS_BIAS:
        bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
        acc += bias[None, :]
    return tl.maximum(acc, 0.0)


@triton.jit
def fused_rows_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, eps,
                      stride_xm, stride_xk, stride_wn, stride_wk, stride_ym,
                      HAS_BIAS: tl.constexpr, UPCAST: tl.constexpr, PRECISION: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # whole output rows (BLOCK_N >= N) per program: linear + bias + relu + layer norm in one pass
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    h = _linear_tile(x_ptr, w_ptr, b_ptr, offs_m, offs_n, M, N, K,
                     stride_xm, stride_xk, stride_wn, stride_wk,
                     HAS_BIAS, UPCAST, PRECISION, BLOCK_M, BLOCK_N, BLOCK_K)
    mask_n = offs_n < N
    h = tl.where(mask_n[None, :], h, 0.0)
    mean = tl.sum(h, axis=1) / N
    d = tl.where(mask_n[None, :], h - mean[:, None], 0.0)
    var = tl.sum(d * d, axis=1) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    y = d * rstd[:, None]
    y_ptrs = y_ptr + offs_m.to(tl.int64)[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=(offs_m < M)[:, None] & mask_n[None, :])


@triton.jit
def linear_relu_kernel(x_ptr, w_ptr, b_ptr, h_ptr, M, N, K,
                       stride_xm, stride_xk, stride_wn, stride_wk, stride_hm,
                       HAS_BIAS: tl.constexpr, UPCAST: tl.constexpr, PRECISION: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr):
    # tiled GEMM with grouped tile order (L2 reuse) and a bias + relu epilogue, float32 result
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
    h = _linear_tile(x_ptr, w_ptr, b_ptr, offs_m, offs_n, M, N, K,
                     stride_xm, stride_xk, stride_wn, stride_wk,
                     HAS_BIAS, UPCAST, PRECISION, BLOCK_M, BLOCK_N, BLOCK_K)
    h_ptrs = h_ptr + offs_m.to(tl.int64)[:, None] * stride_hm + offs_n[None, :]
    tl.store(h_ptrs, h.to(h_ptr.dtype.element_ty), mask=(offs_m < M)[:, None] & (offs_n < N)[None, :])


@triton.jit
def layer_norm_rows_kernel(h_ptr, y_ptr, N, eps, stride_hm, stride_ym,
                           BLOCK: tl.constexpr, ONE_BLOCK: tl.constexpr):
    # one program per row: mean, biased variance (two-pass), normalize
    row = tl.program_id(0).to(tl.int64)
    h_row = h_ptr + row * stride_hm
    y_row = y_ptr + row * stride_ym
    cols = tl.arange(0, BLOCK)
    if ONE_BLOCK:
        mask = cols < N
        h = tl.load(h_row + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(h, axis=0) / N
        d = tl.where(mask, h - mean, 0.0)
        var = tl.sum(d * d, axis=0) / N
        rstd = 1.0 / tl.sqrt(var + eps)
        tl.store(y_row + cols, (d * rstd).to(y_ptr.dtype.element_ty), mask=mask)
    else:
        total = tl.zeros((BLOCK,), dtype=tl.float32)
        for n0 in range(0, N, BLOCK):
            total += tl.load(h_row + n0 + cols, mask=n0 + cols < N, other=0.0).to(tl.float32)
        mean = tl.sum(total, axis=0) / N
        sq = tl.zeros((BLOCK,), dtype=tl.float32)
        for n0 in range(0, N, BLOCK):
            mask = n0 + cols < N
            d = tl.where(mask, tl.load(h_row + n0 + cols, mask=mask, other=0.0).to(tl.float32) - mean, 0.0)
            sq += d * d
        rstd = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / N + eps)
        for n0 in range(0, N, BLOCK):
            mask = n0 + cols < N
            h = tl.load(h_row + n0 + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(y_row + n0 + cols, ((h - mean) * rstd).to(y_ptr.dtype.element_ty), mask=mask)


def _block(extent, largest):
    return max(16, min(largest, triton.next_power_of_2(extent)))


def fused_layer_norm_relu_linear(input, weight, bias=None, normalized_shape=None, eps=1e-5,
                                 elementwise_affine=True):
    n, k = weight.shape
    if normalized_shape is not None:
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        if shape != (n,):
            raise ValueError(f"normalized_shape must be ({n},), got {shape}")
    if input.shape[-1] != k:
        raise ValueError("input's last dimension must equal weight's in_features")
    lead = tuple(input.shape[:-1])
    x = input.reshape(-1, k)
    m = x.shape[0]
    y = torch.empty((m, n), device=input.device, dtype=input.dtype)
    has_bias = bias is not None
    b = bias.contiguous() if has_bias else weight  # dummy pointer when there is no bias
    upcast = input.dtype == torch.bfloat16 and input.device.type == "cpu"
    half = input.element_size() == 2
    # Layer norm divides by each row's spread, which magnifies the GEMM's rounding error; plain TF32
    # (operands truncated to 10 mantissa bits on NVIDIA) leaves too little margin, so float32 inputs
    # use the 3-pass TF32 split, which is close to full float32 accuracy on tensor cores.
    precision = "tf32x3" if input.dtype == torch.float32 else "tf32"
    block_k = _block(k, 64 if half else 32)
    if m == 0:
        return y.reshape(lead + (n,))

    if triton.next_power_of_2(n) <= MAX_FUSED_N:
        block_n = _block(n, MAX_FUSED_N)
        block_m = _block(m, 64)
        fused_rows_kernel[(triton.cdiv(m, block_m),)](
            x, weight, b, y, m, n, k, float(eps),
            x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), y.stride(0),
            HAS_BIAS=has_bias, UPCAST=upcast, PRECISION=precision,
            BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
            num_warps=8 if block_n >= 128 else 4, num_stages=3)
        return y.reshape(lead + (n,))

    h = torch.empty((m, n), device=input.device, dtype=torch.float32)
    block_m = _block(m, 128)
    block_n = _block(n, 128)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    linear_relu_kernel[grid](
        x, weight, b, h, m, n, k,
        x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), h.stride(0),
        HAS_BIAS=has_bias, UPCAST=upcast, PRECISION=precision,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=GROUP_M,
        num_warps=8 if block_m * block_n >= 128 * 128 else 4, num_stages=3)
    one_block = triton.next_power_of_2(n) <= MAX_ROW_BLOCK
    block = triton.next_power_of_2(n) if one_block else 4096
    layer_norm_rows_kernel[(m,)](h, y, n, float(eps), h.stride(0), y.stride(0),
                                 BLOCK=block, ONE_BLOCK=one_block, num_warps=16 if block >= 4096 else 8)
    return y.reshape(lead + (n,))
