import torch
import triton
import triton.language as tl

GROUP_M = 8


@triton.jit
def linear_softplus_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, beta, threshold,
                      stride_xm, stride_xk, stride_wn, stride_wk, stride_ym,
                      HAS_BIAS: tl.constexpr, UPCAST: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr):
    # Tiled GEMM y = x @ w.T with grouped tile order (L2 reuse), then bias + softplus in registers.
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
        acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk
    if HAS_BIAS:
        acc += tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)[None, :]
    z = beta * acc
    # log(1 + exp(z)) = max(z, 0) + log(1 + exp(-|z|)): never overflows
    soft = (tl.maximum(z, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(z)))) / beta
    y = tl.where(z > threshold, acc, soft)
    y_ptrs = y_ptr + offs_m.to(tl.int64)[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def _block(extent, largest):
    return max(16, min(largest, triton.next_power_of_2(extent)))


def fused_softplus_linear(input, weight, bias=None, beta=1, threshold=20):
    n, k = weight.shape
    if input.shape[-1] != k:
        raise ValueError("input's last dimension must equal weight's in_features")
    lead = tuple(input.shape[:-1])
    x = input.reshape(-1, k)
    m = x.shape[0]
    y = torch.empty((m, n), device=input.device, dtype=input.dtype)
    if m == 0 or n == 0:
        return y.reshape(lead + (n,))
    b = bias.contiguous() if bias is not None else weight  # dummy pointer when there is no bias
    upcast = input.dtype == torch.bfloat16 and input.device.type == "cpu"
    block_m = _block(m, 128)
    block_n = _block(n, 128)
    block_k = _block(k, 64 if input.element_size() == 2 else 32)
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    linear_softplus_kernel[grid](
        x, weight, b, y, m, n, k, float(beta), float(threshold),
        x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), y.stride(0),
        HAS_BIAS=bias is not None, UPCAST=upcast,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=GROUP_M,
        num_warps=8 if block_m * block_n >= 128 * 128 else 4, num_stages=3)
    return y.reshape(lead + (n,))
