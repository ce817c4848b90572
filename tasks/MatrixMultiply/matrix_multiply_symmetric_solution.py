import torch
import triton
import triton.language as tl

GROUP_M = 8


@triton.jit
def gemm_epilogue_kernel(a_ptr, b_ptr, c_ptr, out_ptr, M, N, K, alpha, beta,
                         stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, stride_om, stride_on,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                         GROUP_M: tl.constexpr, HAS_C: tl.constexpr, UPCAST: tl.constexpr,
                         PRECISE: tl.constexpr):
    # out = alpha * (a @ b) + beta * c, every operand addressed through its strides
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pids_in_group = GROUP_M * num_pid_n
    group = pid // pids_in_group
    first_m = group * GROUP_M
    group_size = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % pids_in_group) % group_size
    pid_n = (pid % pids_in_group) // group_size

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    rows = offs_m.to(tl.int64)
    cols = offs_n.to(tl.int64)
    a_ptrs = a_ptr + rows[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + cols[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0.0)
        if UPCAST:
            # the CPU interpreter multiplies bfloat16 tiles as raw 16-bit integers; widen them there
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        if PRECISE:
            # float32 operands multiplied at (nearly) full float32 precision: three TF32 passes
            acc = tl.dot(a, b, acc, input_precision="tf32x3")
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    mask = mask_m[:, None] & mask_n[None, :]
    result = acc * alpha
    if HAS_C:
        c = tl.load(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, mask=mask, other=0.0)
        result += beta * c.to(tl.float32)
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :] * stride_on,
             result.to(out_ptr.dtype.element_ty), mask=mask)


def _block(extent, largest):
    return max(16, min(largest, triton.next_power_of_2(extent)))


def _gemm(a, b, c, out, alpha, beta, precise):
    m, k = a.shape
    n = b.shape[1]
    half = a.element_size() == 2
    block_m = _block(m, 128)
    block_n = _block(n, 128)
    block_k = _block(k, 64 if half else 32)
    num_warps = 8 if block_m * block_n >= 128 * 128 else 4
    upcast = a.dtype == torch.bfloat16 and a.device.type == "cpu"
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    gemm_epilogue_kernel[grid](a, b, c, out, m, n, k, float(alpha), float(beta),
                               a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                               c.stride(0), c.stride(1), out.stride(0), out.stride(1),
                               BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=GROUP_M,
                               HAS_C=beta != 0, UPCAST=upcast, PRECISE=precise, num_warps=num_warps, num_stages=3)


def matrix_multiply_symmetric(A, B, C, alpha, beta):
    n, m = A.shape
    if tuple(B.shape) != (m, n) or tuple(C.shape) != (n, n):
        raise ValueError("expected A (n, m), B (m, n) and C (n, n)")
    # D = alpha * A @ B + beta * C, kept in float32: D @ D^T magnifies any rounding of D
    D = torch.empty((n, n), device=A.device, dtype=torch.float32)
    _gemm(A, B, C, D, alpha, beta, False)
    # result = alpha * D @ D^T + beta * D; D^T is a stride-swapped view, no copy. For half-precision
    # inputs the tolerance is tighter than TF32's rounding of D, so that product runs as 3xTF32.
    out = torch.empty((n, n), device=A.device, dtype=A.dtype)
    _gemm(D, D.t(), D, out, alpha, beta, A.dtype != torch.float32)
    return out
