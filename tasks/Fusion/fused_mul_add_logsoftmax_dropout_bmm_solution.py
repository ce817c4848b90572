import torch
import triton
import triton.language as tl

GROUP_M = 8


@triton.jit
def _scores(x1_ptr, x2_ptr, o_ptr, f, b, n, k, ok, o_scalar, os0, os1, os2, O_TENSOR: tl.constexpr):
    # S = input1 * input2 + other at flat index f = (b, n, k) of the contiguous (B, N, D_in) inputs
    s = tl.load(x1_ptr + f, mask=ok, other=0.0).to(tl.float32) * tl.load(x2_ptr + f, mask=ok, other=0.0).to(tl.float32)
    if O_TENSOR:
        s += tl.load(o_ptr + b * os0 + n * os1 + k * os2, mask=ok, other=0.0).to(tl.float32)
    else:
        s += o_scalar
    return s


@triton.jit
def lse_kernel(x1_ptr, x2_ptr, o_ptr, lse_ptr, N, D, L, INNER, so, sl, si, o_scalar, os0, os1, os2,
               O_TENSOR: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_I: tl.constexpr):
    # log-sum-exp of S over the softmax dim. Program (outer index, block of inner indices); element
    # (outer, l, inner) sits at flat index outer*so + l*sl + inner*si; lse is stored as (outer, inner).
    outer = tl.program_id(0).to(tl.int64)
    inner = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    inner_ok = inner < INNER
    ls = tl.arange(0, BLOCK_L)
    m_run = tl.full((BLOCK_I,), float("-inf"), dtype=tl.float32)
    s_run = tl.zeros((BLOCK_I,), dtype=tl.float32)
    for l0 in range(0, L, BLOCK_L):
        l = l0 + ls
        ok = (l < L)[:, None] & inner_ok[None, :]
        f = outer * so + l.to(tl.int64)[:, None] * sl + inner.to(tl.int64)[None, :] * si
        b = f // (N * D)
        n = (f // D) % N
        k = f % D
        s = _scores(x1_ptr, x2_ptr, o_ptr, f, b, n, k, ok, o_scalar, os0, os1, os2, O_TENSOR)
        s = tl.where(ok, s, float("-inf"))
        m_new = tl.maximum(m_run, tl.max(s, axis=0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s_run = s_run * tl.exp(m_run - m_safe) + tl.sum(tl.exp(s - m_safe[None, :]), axis=0)
        m_run = m_new
    tl.store(lse_ptr + outer * INNER + inner, m_run + tl.log(s_run), mask=inner_ok)


@triton.jit
def dropout_bmm_kernel(x1_ptr, x2_ptr, o_ptr, lse_ptr, m2_ptr, y_ptr, N, D, P,
                       o_scalar, os0, os1, os2, ls0, ls1, ls2,
                       sm_b, sm_k, sm_p, p, scale, seed,
                       O_TENSOR: tl.constexpr, DROPOUT: tl.constexpr, UPCAST: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # Y[b] = D[b] @ mat2[b]; the A tiles are made on the fly: D = dropout(S - lse), keyed by the flat
    # index of (b, n, k) so every column block of Y sees the same mask.
    pid = tl.program_id(0)
    b = tl.program_id(1).to(tl.int64)
    num_pid_m = tl.cdiv(N, BLOCK_M)
    num_pid_n = tl.cdiv(P, BLOCK_N)
    pids_in_group = GROUP_M * num_pid_n
    first_m = (pid // pids_in_group) * GROUP_M
    group_size = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % pids_in_group) % group_size
    pid_n = (pid % pids_in_group) // group_size

    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    row_ok = rows < N
    col_ok = cols < P
    n = rows.to(tl.int64)[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, D, BLOCK_K):
        k = (k0 + ks).to(tl.int64)[None, :]
        k_ok = (k0 + ks) < D
        ok = row_ok[:, None] & k_ok[None, :]
        f = (b * N + n) * D + k
        s = _scores(x1_ptr, x2_ptr, o_ptr, f, b, n, k, ok, o_scalar, os0, os1, os2, O_TENSOR)
        lse = tl.load(lse_ptr + b * ls0 + n * ls1 + k * ls2, mask=ok, other=0.0)
        d = s - lse
        if DROPOUT:
            keep = tl.rand(seed, f) >= p
            d = tl.where(keep, d * scale, 0.0)
        a = tl.where(ok, d, 0.0).to(y_ptr.dtype.element_ty)
        m2 = tl.load(m2_ptr + b * sm_b + k.reshape(BLOCK_K, 1) * sm_k + cols.to(tl.int64)[None, :] * sm_p,
                     mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        if UPCAST:
            # the CPU interpreter multiplies bfloat16 tiles as raw 16-bit integers; widen them there
            a = a.to(tl.float32)
            m2 = m2.to(tl.float32)
        acc = tl.dot(a, m2, acc)
    y_ptrs = y_ptr + (b * N + n) * P + cols.to(tl.int64)[None, :]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=row_ok[:, None] & col_ok[None, :])


def _block(extent, largest):
    return max(16, min(largest, triton.next_power_of_2(extent)))


def fused_mul_add_logsoftmax_dropout_bmm(input1, input2, other, mat2, p=0.5, training=True, inplace=False,
                                         dim=-1, *, out=None):
    if input1.dim() != 3 or tuple(input1.shape) != tuple(input2.shape):
        raise ValueError("input1 and input2 must both be (B, N, D_in)")
    B, N, D = input1.shape
    if mat2.dim() != 3 or mat2.shape[0] != B or mat2.shape[1] != D:
        raise ValueError("mat2 must be (B, D_in, D_out)")
    if not 0.0 <= p <= 1.0:
        raise ValueError("p must be in [0, 1]")
    d = dim + 3 if dim < 0 else dim
    if not 0 <= d < 3:
        raise IndexError(f"dim {dim} out of range")
    P = mat2.shape[2]
    y = torch.empty((B, N, P), dtype=input1.dtype, device=input1.device)
    if y.numel() == 0:
        return y
    x1 = input1.contiguous()
    x2 = input2.contiguous()
    o_tensor = isinstance(other, torch.Tensor)
    o, o_scalar, os = x1, 0.0, (0, 0, 0)
    if o_tensor:
        oe = other.expand((B, N, D))
        o, os = oe, (oe.stride(0), oe.stride(1), oe.stride(2))
    else:
        o_scalar = float(other)

    # log-sum-exp over the softmax dim, stored with that dim removed
    if d == 2:
        outer, L, inner, so, sl, si, lse_strides = 1, D, B * N, 0, 1, D, (N, 1, 0)
    elif d == 1:
        outer, L, inner, so, sl, si, lse_strides = B, N, D, N * D, D, 1, (D, 0, 1)
    else:
        outer, L, inner, so, sl, si, lse_strides = 1, B, N * D, 0, N * D, 1, (0, D, 1)
    lse = torch.empty((outer * inner,), dtype=torch.float32, device=input1.device)
    if d == 2:
        block_l = min(1024, triton.next_power_of_2(L))
        block_i = max(1, min(4096 // block_l, 64, triton.next_power_of_2(inner)))
    else:
        block_i = min(256, triton.next_power_of_2(inner))
        block_l = max(1, min(4096 // block_i, triton.next_power_of_2(L)))
    lse_kernel[(outer, triton.cdiv(inner, block_i))](
        x1, x2, o, lse, N, D, L, inner, so, sl, si, o_scalar, *os,
        O_TENSOR=o_tensor, BLOCK_L=block_l, BLOCK_I=block_i, num_warps=4)

    dropout = bool(training) and p > 0.0
    seed = torch.randint(0, 2**31 - 1, (1,)).item() if dropout else 0
    scale = 1.0 / (1.0 - p) if p < 1.0 else 0.0
    half = input1.element_size() == 2
    block_m = _block(N, 128)
    block_n = _block(P, 128)
    block_k = _block(D, 64 if half else 32)
    upcast = input1.dtype == torch.bfloat16 and input1.device.type == "cpu"
    grid = (triton.cdiv(N, block_m) * triton.cdiv(P, block_n), B)
    dropout_bmm_kernel[grid](
        x1, x2, o, lse, mat2, y, N, D, P, o_scalar, *os, *lse_strides,
        mat2.stride(0), mat2.stride(1), mat2.stride(2), float(p), scale, seed,
        O_TENSOR=o_tensor, DROPOUT=dropout, UPCAST=upcast,
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=GROUP_M,
        num_warps=8 if block_m * block_n >= 128 * 128 else 4, num_stages=3)
    if out is not None:
        out.copy_(y)
        return out
    return y
