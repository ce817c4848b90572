import math

import torch
import triton
import triton.language as tl

GROUP_M = 8


@triton.jit
def gemm_rsqrt_kernel(a_ptr, b_ptr, out_ptr, M, N, K,
                      stride_am, stride_ak, stride_bk, stride_bn, stride_om, stride_on,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, UPCAST: tl.constexpr):
    # out = 1 / sqrt(a @ b) for a (M, K) and b (K, N)
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

    result = 1.0 / tl.sqrt(acc)
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :] * stride_on,
             result.to(out_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def _block(extent, largest):
    return max(16, min(largest, triton.next_power_of_2(extent)))


def _as_matrix(t, lead, tail):
    """t with dims `lead` then `tail`, flattened to (prod lead, prod tail); a view when strides allow."""
    rows = math.prod(t.shape[d] for d in lead)
    cols = math.prod(t.shape[d] for d in tail)
    return t.permute(*lead, *tail).reshape(rows, cols)


def tensordot_rsqrt(a, b, dims):
    if isinstance(dims, int):
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = [d % a.dim() for d in dims[0]], [d % b.dim() for d in dims[1]]
    if len(da) != len(db) or any(a.shape[i] != b.shape[j] for i, j in zip(da, db)):
        raise ValueError("contracted dimensions must pair up with equal sizes")
    free_a = [d for d in range(a.dim()) if d not in da]
    free_b = [d for d in range(b.dim()) if d not in db]
    out_shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    a2 = _as_matrix(a, free_a, da)  # (M, K)
    b2 = _as_matrix(b, db, free_b)  # (K, N)
    m, k = a2.shape
    n = b2.shape[1]
    out = torch.empty((m, n), device=a.device, dtype=a.dtype)
    half = a.element_size() == 2
    block_m = _block(m, 128)
    block_n = _block(n, 128)
    block_k = _block(k, 64 if half else 32)
    num_warps = 8 if block_m * block_n >= 128 * 128 else 4
    upcast = a.dtype == torch.bfloat16 and a.device.type == "cpu"
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n),)
    gemm_rsqrt_kernel[grid](a2, b2, out, m, n, k, a2.stride(0), a2.stride(1), b2.stride(0), b2.stride(1),
                            out.stride(0), out.stride(1), BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
                            GROUP_M=GROUP_M, UPCAST=upcast, num_warps=num_warps, num_stages=3)
    return out.view(out_shape)
