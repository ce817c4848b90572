import torch
import triton
import triton.language as tl

GROUP_M = 8


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_ab, stride_am, stride_ak,
                  stride_bb, stride_bk, stride_bn,
                  stride_cb, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, UPCAST: tl.constexpr):
    # grouped ordering of output tiles: GROUP_M row-tiles share the same column panels of B in L2
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
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
    a_ptrs = (a_ptr + batch * stride_ab + offs_m.to(tl.int64)[:, None] * stride_am
              + offs_k[None, :] * stride_ak)
    b_ptrs = (b_ptr + batch * stride_bb + offs_k[:, None] * stride_bk
              + offs_n.to(tl.int64)[None, :] * stride_bn)

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

    c_ptrs = (c_ptr + batch * stride_cb + offs_m.to(tl.int64)[:, None] * stride_cm
              + offs_n.to(tl.int64)[None, :] * stride_cn)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def _block(extent, largest):
    return max(16, min(largest, triton.next_power_of_2(extent)))


def matmul(tensor1, tensor2):
    if tensor1.dim() not in (2, 3) or tensor2.dim() not in (2, 3):
        raise ValueError("matmul supports 2-D and 3-D operands")
    if tensor1.dtype != tensor2.dtype:
        raise TypeError("tensor1 and tensor2 must have the same dtype")
    a = tensor1 if tensor1.dim() == 3 else tensor1.unsqueeze(0)
    b = tensor2 if tensor2.dim() == 3 else tensor2.unsqueeze(0)
    batch_a, m, k = a.shape
    batch_b, k2, n = b.shape
    if k != k2:
        raise ValueError(f"inner dimensions differ: {k} vs {k2}")
    if batch_a != batch_b and batch_a != 1 and batch_b != 1:
        raise ValueError("batch sizes must match")
    batch = max(batch_a, batch_b)
    stride_ab = a.stride(0) if batch_a > 1 else 0
    stride_bb = b.stride(0) if batch_b > 1 else 0

    if tensor1.dim() == 2 and tensor2.dim() == 2:
        out_shape = (m, n)
    else:
        out_shape = (batch, m, n)
    c = torch.empty(out_shape, device=tensor1.device, dtype=tensor1.dtype)
    c3 = c if c.dim() == 3 else c.unsqueeze(0)

    half = tensor1.element_size() == 2
    block_m = _block(m, 128)
    block_n = _block(n, 128)
    block_k = _block(k, 64 if half else 32)
    num_warps = 8 if block_m * block_n >= 128 * 128 else 4
    # bfloat16 on CPU tensors means the Triton interpreter (see UPCAST in the kernel)
    upcast = tensor1.dtype == torch.bfloat16 and tensor1.device.type == "cpu"
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n), batch)
    matmul_kernel[grid](a, b, c3, m, n, k,
                        stride_ab, a.stride(1), a.stride(2),
                        stride_bb, b.stride(1), b.stride(2),
                        c3.stride(0), c3.stride(1), c3.stride(2),
                        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=GROUP_M,
                        UPCAST=upcast,
                        num_warps=num_warps, num_stages=3)
    return c
