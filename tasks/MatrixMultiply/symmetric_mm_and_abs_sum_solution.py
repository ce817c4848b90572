import torch
import triton
import triton.language as tl

GROUP_M = 8


@triton.jit
def gram_abs_kernel(a_ptr, c_ptr, part_ptr, N, K, alpha, beta,
                    stride_am, stride_ak, stride_cm, stride_cn,
                    BLOCK: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                    HAS_C: tl.constexpr, UPCAST: tl.constexpr):
    # one BLOCK x BLOCK tile of G = A @ A^T; part[pid] = sum |alpha * G + beta * C| over the tile
    pid = tl.program_id(0)
    num_pid = tl.cdiv(N, BLOCK)
    pids_in_group = GROUP_M * num_pid
    group = pid // pids_in_group
    first_m = group * GROUP_M
    group_size = tl.minimum(num_pid - first_m, GROUP_M)
    pid_m = first_m + (pid % pids_in_group) % group_size
    pid_n = (pid % pids_in_group) // group_size

    offs_m = pid_m * BLOCK + tl.arange(0, BLOCK)
    offs_n = pid_n * BLOCK + tl.arange(0, BLOCK)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < N
    mask_n = offs_n < N
    rows = offs_m.to(tl.int64)
    cols = offs_n.to(tl.int64)
    a_ptrs = a_ptr + rows[:, None] * stride_am + offs_k[None, :] * stride_ak
    # the right operand is A^T: element (k, j) is A[j, k]
    b_ptrs = a_ptr + offs_k[:, None] * stride_ak + cols[None, :] * stride_am

    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
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
        b_ptrs += BLOCK_K * stride_ak

    mask = mask_m[:, None] & mask_n[None, :]
    val = acc * alpha
    if HAS_C:
        c = tl.load(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, mask=mask, other=0.0)
        val += beta * c.to(tl.float32)
    tile_sum = tl.sum(tl.sum(tl.where(mask, tl.abs(val), 0.0), axis=1), axis=0)
    tl.store(part_ptr + pid, tile_sum)


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        acc += tl.load(x_ptr + start + offs, mask=start + offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


def symmetric_mm_and_abs_sum(A, C, alpha, beta):
    n, m = A.shape
    if tuple(C.shape) != (n, n):
        raise ValueError("expected A (n, m) and C (n, n)")
    half = A.element_size() == 2
    block = max(16, min(128, triton.next_power_of_2(n)))
    block_k = max(16, min(64 if half else 32, triton.next_power_of_2(m)))
    tiles = triton.cdiv(n, block) ** 2
    part = torch.empty((tiles,), device=A.device, dtype=torch.float32)
    upcast = A.dtype == torch.bfloat16 and A.device.type == "cpu"
    gram_abs_kernel[(tiles,)](A, C, part, n, m, float(alpha), float(beta),
                              A.stride(0), A.stride(1), C.stride(0), C.stride(1),
                              BLOCK=block, BLOCK_K=block_k, GROUP_M=GROUP_M, HAS_C=beta != 0, UPCAST=upcast,
                              num_warps=8 if block >= 128 else 4, num_stages=3)
    out = torch.empty((), device=A.device, dtype=A.dtype)
    sum_kernel[(1,)](part, out, tiles, BLOCK=max(16, min(1024, triton.next_power_of_2(tiles))), num_warps=4)
    return out
