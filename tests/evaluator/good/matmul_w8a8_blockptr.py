# task: Quantization/matmul_w8a8
# style: block pointers (tl.make_block_ptr / tl.advance) in the int8 GEMM, autotuned (several configs, key), grouped program-id swizzle, torch.empty((M, K), dtype=torch.int8) staging buffers
import torch
import triton
import triton.language as tl


@triton.jit
def quant_rows_kernel(x_ptr, q_ptr, s_ptr, K, stride_xm, stride_xk, BLOCK_K: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * stride_xm
    q_row = q_ptr + row.to(tl.int64) * K
    amax = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        v = tl.load(x_row + ks * stride_xk, mask=ks < K, other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.abs(v))
    scale = tl.max(amax, axis=0) / 127.0
    safe = tl.where(scale > 0, scale, 1.0)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        v = tl.load(x_row + ks * stride_xk, mask=ks < K, other=0.0).to(tl.float32)
        q = tl.floor(v / safe + 0.5)
        q = tl.minimum(tl.maximum(q, -127.0), 127.0)
        tl.store(q_row + ks, q.to(tl.int8), mask=ks < K)
    tl.store(s_ptr + row, scale)


@triton.jit
def quant_cols_kernel(w_ptr, q_ptr, s_ptr, K, N, stride_wk, stride_wn, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    amax = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        m = (ks[:, None] < K) & col_ok[None, :]
        w = tl.load(w_ptr + ks[:, None] * stride_wk + cols[None, :] * stride_wn, mask=m, other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.max(tl.abs(w), axis=0))
    scale = amax / 127.0
    safe = tl.where(scale > 0, scale, 1.0)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        m = (ks[:, None] < K) & col_ok[None, :]
        w = tl.load(w_ptr + ks[:, None] * stride_wk + cols[None, :] * stride_wn, mask=m, other=0.0).to(tl.float32)
        q = tl.floor(w / safe[None, :] + 0.5)
        q = tl.minimum(tl.maximum(q, -127.0), 127.0)
        tl.store(q_ptr + ks[:, None] * N + cols[None, :], q.to(tl.int8), mask=m)
    tl.store(s_ptr + cols, scale, mask=col_ok)


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 4}, num_warps=2, num_stages=2),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def int8_gemm_dequant_kernel(qa_ptr, qb_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K, stride_cm, stride_cn,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    group_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % per_group) % group_m)
    pid_n = (pid % per_group) // group_m

    a_blk = tl.make_block_ptr(qa_ptr, shape=(M, K), strides=(K, 1), offsets=(pid_m * BLOCK_M, 0),
                              block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    b_blk = tl.make_block_ptr(qb_ptr, shape=(K, N), strides=(N, 1), offsets=(0, pid_n * BLOCK_N),
                              block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_blk, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_blk, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        a_blk = tl.advance(a_blk, (0, BLOCK_K))
        b_blk = tl.advance(b_blk, (BLOCK_K, 0))

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    sa = tl.load(sa_ptr + rm, mask=rm < M, other=0.0)
    sb = tl.load(sb_ptr + rn, mask=rn < N, other=0.0)
    out = acc.to(tl.float32) * sa[:, None] * sb[None, :]
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, out.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul_w8a8(input: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    assert input.dim() == 2 and weight.dim() == 2, "expected (M, K) @ (K, N)"
    M, K = input.shape
    K2, N = weight.shape
    assert K == K2, f"inner dimensions differ: {K} vs {K2}"
    dev = input.device

    qa = torch.empty((M, K), device=dev, dtype=torch.int8)
    qb = torch.empty((K, N), device=dev, dtype=torch.int8)
    sa = torch.empty((M,), device=dev, dtype=torch.float32)
    sb = torch.empty((N,), device=dev, dtype=torch.float32)
    out = torch.empty((M, N), device=dev, dtype=input.dtype)
    if M == 0 or N == 0:
        return out

    quant_rows_kernel[(M,)](input, qa, sa, K, input.stride(0), input.stride(1), BLOCK_K=256)
    quant_cols_kernel[(triton.cdiv(N, 64),)](weight, qb, sb, K, N, weight.stride(0), weight.stride(1),
                                             BLOCK_K=32, BLOCK_N=64)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
    int8_gemm_dequant_kernel[grid](qa, qb, sa, sb, out, M, N, K, out.stride(0), out.stride(1))
    return out
