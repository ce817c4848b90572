import torch
import triton
import triton.language as tl

TARGET_PROGRAMS = 528  # enough programs to keep every SM of an H100 streaming B


@triton.jit
def two_rows_kernel(a_ptr, b_ptr, part_ptr, m, p, k_per_split,
                    stride_a0, stride_ak, stride_bk, stride_bn,
                    BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    # partial products of rows 0 and 1 of A with B over the k range of split s:
    # part[s, r, j] = sum_{k in split s} A[r, k] * B[k, j]
    pid_n = tl.program_id(0)
    pid_s = tl.program_id(1)
    cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < p
    ks = tl.arange(0, BLOCK_K)
    k_start = pid_s.to(tl.int64) * k_per_split
    k_end = tl.minimum(k_start + k_per_split, m)
    acc0 = tl.zeros((BLOCK_K, BLOCK_N), dtype=tl.float32)
    acc1 = tl.zeros((BLOCK_K, BLOCK_N), dtype=tl.float32)
    for k0 in range(k_start, k_end, BLOCK_K):
        k = k0 + ks
        k_ok = k < k_end
        b = tl.load(b_ptr + k[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=k_ok[:, None] & col_ok[None, :], other=0.0).to(tl.float32)
        a0 = tl.load(a_ptr + k * stride_ak, mask=k_ok, other=0.0).to(tl.float32)
        a1 = tl.load(a_ptr + stride_a0 + k * stride_ak, mask=k_ok, other=0.0).to(tl.float32)
        acc0 += a0[:, None] * b
        acc1 += a1[:, None] * b
    base = part_ptr + pid_s.to(tl.int64) * 2 * p
    tl.store(base + cols, tl.sum(acc0, axis=0), mask=col_ok)
    tl.store(base + p + cols, tl.sum(acc1, axis=0), mask=col_ok)


@triton.jit
def row_dot_kernel(part_ptr, c_ptr, dot_ptr, p, splits, alpha, beta, stride_c0, stride_cn,
                   HAS_C: tl.constexpr, BLOCK_N: tl.constexpr):
    # finish rows 0 and 1 of D = alpha * A @ B + beta * C on one block of columns, then their dot
    pid = tl.program_id(0)
    cols = pid.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < p
    r0 = tl.zeros((BLOCK_N,), dtype=tl.float32)
    r1 = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for s in range(0, splits):
        base = part_ptr + s * 2 * p
        r0 += tl.load(base + cols, mask=col_ok, other=0.0)
        r1 += tl.load(base + p + cols, mask=col_ok, other=0.0)
    d0 = alpha * r0
    d1 = alpha * r1
    if HAS_C:
        d0 += beta * tl.load(c_ptr + cols * stride_cn, mask=col_ok, other=0.0).to(tl.float32)
        d1 += beta * tl.load(c_ptr + stride_c0 + cols * stride_cn, mask=col_ok, other=0.0).to(tl.float32)
    tl.store(dot_ptr + pid, tl.sum(tl.where(col_ok, d0 * d1, 0.0), axis=0))


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        acc += tl.load(x_ptr + start + offs, mask=start + offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


def matrix_multiply_and_row_dot(A, B, alpha, beta, C):
    n, m = A.shape
    m2, p = B.shape
    if m != m2 or tuple(C.shape) != (n, p) or n < 2:
        raise ValueError("expected A (n, m), B (m, p), C (n, p) with n >= 2")
    device = A.device
    block_n = max(16, min(128, triton.next_power_of_2(p)))
    block_k = max(16, min(64, triton.next_power_of_2(m)))
    col_blocks = triton.cdiv(p, block_n)
    # split the reduction over m when the columns alone give too few programs
    want = max(1, min(triton.cdiv(TARGET_PROGRAMS, col_blocks), triton.cdiv(m, 4 * block_k)))
    per = triton.cdiv(triton.cdiv(m, want), block_k) * block_k
    splits = triton.cdiv(m, per)
    part = torch.empty((splits, 2, p), device=device, dtype=torch.float32)
    two_rows_kernel[(col_blocks, splits)](A, B, part, m, p, per, A.stride(0), A.stride(1),
                                          B.stride(0), B.stride(1), BLOCK_K=block_k, BLOCK_N=block_n,
                                          num_warps=4)
    block_n2 = max(16, min(1024, triton.next_power_of_2(p)))
    blocks2 = triton.cdiv(p, block_n2)
    dots = torch.empty((blocks2,), device=device, dtype=torch.float32)
    row_dot_kernel[(blocks2,)](part, C, dots, p, splits, float(alpha), float(beta), C.stride(0), C.stride(1),
                               HAS_C=beta != 0, BLOCK_N=block_n2, num_warps=4)
    out = torch.empty((), device=device, dtype=A.dtype)
    sum_kernel[(1,)](dots, out, blocks2, BLOCK=max(16, min(1024, triton.next_power_of_2(blocks2))), num_warps=4)
    return out
