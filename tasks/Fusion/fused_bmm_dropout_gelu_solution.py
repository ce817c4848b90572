import torch
import triton
import triton.language as tl

SQRT_HALF = tl.constexpr(0.7071067811865476)
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)
GROUP_M = 8


@triton.jit
def bmm_dropout_gelu_kernel(a_ptr, b_ptr, y_ptr, M, N, K,
                            stride_ab, stride_am, stride_ak,
                            stride_bb, stride_bk, stride_bn,
                            p, scale, seed,
                            DROPOUT: tl.constexpr, TANH: tl.constexpr, UPCAST: tl.constexpr,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                            GROUP_M: tl.constexpr):
    # grouped ordering of output tiles: GROUP_M row-tiles share the same column panels of B in L2
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
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
    a_ptrs = a_ptr + batch * stride_ab + offs_m.to(tl.int64)[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + batch * stride_bb + offs_k[:, None] * stride_bk + offs_n.to(tl.int64)[None, :] * stride_bn
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

    # output element (batch, row, col) has the flat index that keys its random number
    flat = (batch * M + offs_m.to(tl.int64))[:, None] * N + offs_n.to(tl.int64)[None, :]
    x = acc
    if DROPOUT:
        keep = tl.rand(seed, flat) >= p
        x = tl.where(keep, acc * scale, 0.0)
    if TANH:
        inner = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
        y = 0.5 * x * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    else:
        y = 0.5 * x * (1.0 + tl.erf(x * SQRT_HALF))
    tl.store(y_ptr + flat, y.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def _block(extent, largest):
    return max(16, min(largest, triton.next_power_of_2(extent)))


def fused_bmm_dropout_gelu(input1, input2, p=0.5, training=True, inplace=False, approximate="none", *, out=None):
    if input1.dim() != 3 or input2.dim() != 3 or input1.shape[0] != input2.shape[0] \
            or input1.shape[2] != input2.shape[1]:
        raise ValueError("expected input1 (B, N, M) and input2 (B, M, P)")
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    if not 0.0 <= p <= 1.0:
        raise ValueError("p must be in [0, 1]")
    batch, m, k = input1.shape
    n = input2.shape[2]
    y = torch.empty((batch, m, n), device=input1.device, dtype=input1.dtype)
    if y.numel() == 0:
        return y
    dropout = bool(training) and p > 0.0
    seed = torch.randint(0, 2**31 - 1, (1,)).item() if dropout else 0
    scale = 1.0 / (1.0 - p) if p < 1.0 else 0.0
    half = input1.element_size() == 2
    block_m = _block(m, 128)
    block_n = _block(n, 128)
    block_k = _block(k, 64 if half else 32)
    upcast = input1.dtype == torch.bfloat16 and input1.device.type == "cpu"
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n), batch)
    bmm_dropout_gelu_kernel[grid](
        input1, input2, y, m, n, k,
        input1.stride(0), input1.stride(1), input1.stride(2),
        input2.stride(0), input2.stride(1), input2.stride(2),
        float(p), scale, seed,
        DROPOUT=dropout, TANH=approximate == "tanh", UPCAST=upcast,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=GROUP_M,
        num_warps=8 if block_m * block_n >= 128 * 128 else 4, num_stages=3)
    if out is not None:
        out.copy_(y)
        return out
    return y
