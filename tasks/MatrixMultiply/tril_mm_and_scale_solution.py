import torch
import triton
import triton.language as tl

GROUP_M = 8


@triton.jit
def tril_mm_kernel(a_ptr, b_ptr, out_ptr, N, P, scale,
                   stride_am, stride_ak, stride_bk, stride_bn, stride_om, stride_on,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr, UPCAST: tl.constexpr):
    # out = scale * tril(A) @ B; a row block only needs the columns k <= its last row
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(N, BLOCK_M)
    num_pid_n = tl.cdiv(P, BLOCK_N)
    pids_in_group = GROUP_M * num_pid_n
    group = pid // pids_in_group
    first_m = group * GROUP_M
    group_size = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % pids_in_group) % group_size
    pid_n = (pid % pids_in_group) // group_size

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < N
    mask_n = offs_n < P
    rows = offs_m.to(tl.int64)
    cols = offs_n.to(tl.int64)
    a_ptrs = a_ptr + rows[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + cols[None, :] * stride_bn

    k_stop = tl.minimum((pid_m + 1) * BLOCK_M, N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, k_stop, BLOCK_K):
        ks = k0 + offs_k
        k_ok = ks < N
        # the upper triangle (k > row) is never read
        a_mask = mask_m[:, None] & k_ok[None, :] & (ks[None, :] <= offs_m[:, None])
        a = tl.load(a_ptrs, mask=a_mask, other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0.0)
        if UPCAST:
            # the CPU interpreter multiplies bfloat16 tiles as raw 16-bit integers; widen them there
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    result = acc * scale
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :] * stride_on,
             result.to(out_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def _block(extent, largest):
    return max(16, min(largest, triton.next_power_of_2(extent)))


def tril_mm_and_scale(A, B, alpha, beta):
    n = A.shape[0]
    if tuple(A.shape) != (n, n) or B.dim() != 2 or B.shape[0] != n:
        raise ValueError("expected a square A (n, n) and B (n, p)")
    p = B.shape[1]
    out = torch.empty((n, p), device=A.device, dtype=A.dtype)
    half = A.element_size() == 2
    block_m = _block(n, 128)
    block_n = _block(p, 128)
    block_k = _block(n, 64 if half else 32)
    num_warps = 8 if block_m * block_n >= 128 * 128 else 4
    upcast = A.dtype == torch.bfloat16 and A.device.type == "cpu"
    grid = (triton.cdiv(n, block_m) * triton.cdiv(p, block_n),)
    tril_mm_kernel[grid](A, B, out, n, p, float(alpha) * float(beta),
                         A.stride(0), A.stride(1), B.stride(0), B.stride(1), out.stride(0), out.stride(1),
                         BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=GROUP_M, UPCAST=upcast,
                         num_warps=num_warps, num_stages=3)
    return out
