import torch
import triton
import triton.language as tl

SQRT_HALF = tl.constexpr(0.7071067811865476)
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)
GROUP_M = 8
ROW_TILE = 4096      # elements per tile in the row kernel
MAX_ROW_BLOCK = 2048


@triton.jit
def bmm_kernel(a_ptr, b_ptr, z_ptr, M, N, K,
               stride_ab, stride_am, stride_ak,
               stride_bb, stride_bk, stride_bn,
               UPCAST: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
               GROUP_M: tl.constexpr):
    # z[batch] = a[batch] @ b[batch] in float32 (contiguous (B, M, N) output)
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
    flat = (batch * M + offs_m.to(tl.int64))[:, None] * N + offs_n.to(tl.int64)[None, :]
    tl.store(z_ptr + flat, acc, mask=mask_m[:, None] & mask_n[None, :])


@triton.jit
def rmsnorm_gelu_dropout_sub_kernel(z_ptr, o_ptr, y_ptr, R, Nrows, P, eps, p, scale, seed, so_b, so_n, so_p,
                                    DROPOUT: tl.constexpr, TANH: tl.constexpr,
                                    BLOCK_R: tl.constexpr, BLOCK_P: tl.constexpr):
    # BLOCK_R rows of z per program: mean of squares, then normalize, GELU, dropout, minus other
    # (other is read through broadcast strides so_b, so_n, so_p over (B, N, P))
    rows = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < R
    cols = tl.arange(0, BLOCK_P)
    sq = tl.zeros((BLOCK_R, BLOCK_P), dtype=tl.float32)
    for c0 in range(0, P, BLOCK_P):
        c = c0 + cols
        mask = row_ok[:, None] & (c < P)[None, :]
        z = tl.load(z_ptr + rows[:, None] * P + c[None, :], mask=mask, other=0.0)
        sq += z * z
    rstd = 1.0 / tl.sqrt(tl.sum(sq, axis=1) / P + eps)
    o_row = (rows // Nrows) * so_b + (rows % Nrows) * so_n
    for c0 in range(0, P, BLOCK_P):
        c = c0 + cols
        mask = row_ok[:, None] & (c < P)[None, :]
        flat = rows[:, None] * P + c[None, :]
        x = tl.load(z_ptr + flat, mask=mask, other=0.0) * rstd[:, None]
        if TANH:
            inner = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
            g = 0.5 * x * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
        else:
            g = 0.5 * x * (1.0 + tl.erf(x * SQRT_HALF))
        if DROPOUT:
            g = tl.where(tl.rand(seed, flat) >= p, g * scale, 0.0)
        o = tl.load(o_ptr + o_row[:, None] + c[None, :].to(tl.int64) * so_p, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + flat, (g - o).to(y_ptr.dtype.element_ty), mask=mask)


def _block(extent, largest):
    return max(16, min(largest, triton.next_power_of_2(extent)))


def fused_bmm_rmsnorm_gelu_dropout_sub(input1, input2, other, normalized_shape, dropout_p=0.5, training=True,
                                       approximate="none", eps=1e-5, *, out=None):
    if input1.dim() != 3 or input2.dim() != 3 or input1.shape[0] != input2.shape[0] \
            or input1.shape[2] != input2.shape[1]:
        raise ValueError("expected input1 (B, N, M) and input2 (B, M, P)")
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    batch, m, k = input1.shape
    n = input2.shape[2]
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if shape != (n,):
        raise ValueError(f"normalized_shape must be ({n},), got {normalized_shape!r}")
    p = float(dropout_p)
    if not 0.0 <= p <= 1.0:
        raise ValueError("dropout_p must be in [0, 1]")
    y = torch.empty((batch, m, n), device=input1.device, dtype=input1.dtype)
    if y.numel() == 0:
        return y
    z = torch.empty((batch, m, n), device=input1.device, dtype=torch.float32)
    half = input1.element_size() == 2
    block_m = _block(m, 128)
    block_n = _block(n, 128)
    block_k = _block(k, 64 if half else 32)
    upcast = input1.dtype == torch.bfloat16 and input1.device.type == "cpu"
    grid = (triton.cdiv(m, block_m) * triton.cdiv(n, block_n), batch)
    bmm_kernel[grid](input1, input2, z, m, n, k,
                     input1.stride(0), input1.stride(1), input1.stride(2),
                     input2.stride(0), input2.stride(1), input2.stride(2),
                     UPCAST=upcast, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=GROUP_M,
                     num_warps=8 if block_m * block_n >= 128 * 128 else 4, num_stages=3)

    dropout = bool(training) and p > 0.0
    seed = torch.randint(0, 2**31 - 1, (1,)).item() if dropout else 0
    scale = 1.0 / (1.0 - p) if p < 1.0 else 0.0
    rows = batch * m
    block_p = min(triton.next_power_of_2(n), MAX_ROW_BLOCK)
    block_r = min(triton.next_power_of_2(rows), max(1, ROW_TILE // block_p))
    oe = other.expand((batch, m, n))
    rmsnorm_gelu_dropout_sub_kernel[(triton.cdiv(rows, block_r),)](
        z, oe, y, rows, m, n, float(eps), p, scale, seed, oe.stride(0), oe.stride(1), oe.stride(2),
        DROPOUT=dropout, TANH=approximate == "tanh", BLOCK_R=block_r, BLOCK_P=block_p, num_warps=8)
    if out is not None:
        out.copy_(y)
        return out
    return y
