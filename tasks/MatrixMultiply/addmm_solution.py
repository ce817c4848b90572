import torch
import triton
import triton.language as tl

GROUP_M = 8


@triton.jit
def addmm_kernel(a_ptr, b_ptr, c_ptr, out_ptr, M, N, K, alpha, beta,
                 stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, stride_om, stride_on,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 GROUP_M: tl.constexpr, HAS_C: tl.constexpr, UPCAST: tl.constexpr):
    # grouped ordering of output tiles: GROUP_M row-tiles share the same column panels of B in L2
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
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    mask = mask_m[:, None] & mask_n[None, :]
    result = acc * alpha
    if HAS_C:
        # `input` is broadcast through zero strides; with beta == 0 it is never read
        c = tl.load(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, mask=mask, other=0.0)
        result += beta * c.to(tl.float32)
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :] * stride_on,
             result.to(out_ptr.dtype.element_ty), mask=mask)


def _block(extent, largest):
    return max(16, min(largest, triton.next_power_of_2(extent)))


def addmm(input, mat1, mat2, beta=1, alpha=1, out=None):
    if mat1.dim() != 2 or mat2.dim() != 2:
        raise ValueError("mat1 and mat2 must be matrices")
    m, k = mat1.shape
    k2, n = mat2.shape
    if k != k2:
        raise ValueError(f"inner dimensions differ: {k} vs {k2}")
    result = torch.empty((m, n), device=mat1.device, dtype=mat1.dtype)
    has_c = beta != 0
    c = input.expand(m, n)  # a view: broadcast dims get stride 0
    half = mat1.element_size() == 2
    block_m = _block(m, 128)
    block_n = _block(n, 128)
    block_k = _block(k, 64 if half else 32)
    num_warps = 8 if block_m * block_n >= 128 * 128 else 4
    upcast = mat1.dtype == torch.bfloat16 and mat1.device.type == "cpu"
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    addmm_kernel[grid](mat1, mat2, c, result, m, n, k, float(alpha), float(beta),
                       mat1.stride(0), mat1.stride(1), mat2.stride(0), mat2.stride(1),
                       c.stride(0), c.stride(1), result.stride(0), result.stride(1),
                       BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=GROUP_M,
                       HAS_C=has_c, UPCAST=upcast, num_warps=num_warps, num_stages=3)
    if out is not None:
        out.copy_(result)
        return out
    return result
