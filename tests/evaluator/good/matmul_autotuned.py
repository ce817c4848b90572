# task: MatrixMultiply/matmul
# style: autotuned (several configs, key), grouped program-id swizzle, tl.program_id(axis=1) for the batch, x.stride() tuples, masks with other=
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 4}, num_warps=2, num_stages=2),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def _bmm_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn,
    WIDEN: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    bid = tl.program_id(axis=1)

    # L2-friendly grouped ordering of the output tiles
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)

    a_base = a_ptr + bid.to(tl.int64) * stride_ab
    b_base = b_ptr + bid.to(tl.int64) * stride_bb
    a_ptrs = a_base + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_base + rk[:, None] * stride_bk + rn[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        if WIDEN:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + bid.to(tl.int64) * stride_cb + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(tensor1, tensor2):
    assert tensor1.dim() in (2, 3) and tensor1.dim() == tensor2.dim(), "expected two 2-D or two 3-D operands"
    assert tensor1.dtype == tensor2.dtype, "operands must share a dtype"
    assert tensor1.shape[-1] == tensor2.shape[-2], "inner dimensions do not match"

    batched = tensor1.dim() == 3
    a = tensor1 if batched else tensor1.unsqueeze(0)
    b = tensor2 if batched else tensor2.unsqueeze(0)
    B, M, K = a.shape
    N = b.shape[2]
    assert b.shape[0] == B, "batch sizes differ"

    shape = (B, M, N) if batched else (M, N)
    out = torch.empty(shape, device=tensor1.device, dtype=tensor1.dtype)
    c = out if batched else out.unsqueeze(0)

    sa, sb, sc = a.stride(), b.stride(), c.stride()
    # bf16 tiles are multiplied in fp32 where the backend cannot (Triton's CPU interpreter)
    widen = tensor1.dtype == torch.bfloat16 and tensor1.device.type != "cuda"

    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]), B)
    _bmm_kernel[grid](
        a, b, c, M, N, K,
        sa[0], sa[1], sa[2],
        sb[0], sb[1], sb[2],
        sc[0], sc[1], sc[2],
        WIDEN=widen,
    )
    return out
