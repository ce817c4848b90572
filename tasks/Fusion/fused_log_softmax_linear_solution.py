import torch
import triton
import triton.language as tl

GROUP_M = 8


@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, z_ptr, pmax_ptr, psum_ptr, M, N, K,
                  stride_xm, stride_xk, stride_wn, stride_wk,
                  HAS_BIAS: tl.constexpr, STATS: tl.constexpr, UPCAST: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # z = x @ w^T + b as a float32 (M, N) matrix. With STATS, each tile also writes, per row, the max of
    # its columns and the sum of exp(z - max), so the row's log-sum-exp needs no second pass over z.
    pid = tl.program_id(0)
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
    x_ptrs = x_ptr + offs_m.to(tl.int64)[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n.to(tl.int64)[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        a = tl.load(x_ptrs, mask=mask_m[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(w_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0.0)
        if UPCAST:
            # the CPU interpreter multiplies bfloat16 tiles as raw 16-bit integers; widen them there
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk
    if HAS_BIAS:
        acc += tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)[None, :]
    z_ptrs = z_ptr + offs_m.to(tl.int64)[:, None] * N + offs_n[None, :]
    tl.store(z_ptrs, acc, mask=mask_m[:, None] & mask_n[None, :])
    if STATS:
        zm = tl.where(mask_n[None, :], acc, float("-inf"))
        tile_max = tl.max(zm, axis=1)
        tile_sum = tl.sum(tl.exp(zm - tile_max[:, None]), axis=1)
        stat_offs = pid_n.to(tl.int64) * M + offs_m
        tl.store(pmax_ptr + stat_offs, tile_max, mask=mask_m)
        tl.store(psum_ptr + stat_offs, tile_sum, mask=mask_m)


@triton.jit
def finish_rows_kernel(z_ptr, pmax_ptr, psum_ptr, y_ptr, M, N, num_tiles,
                       BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_T: tl.constexpr):
    # log_softmax over the last dim: combine the per-tile statistics of BLOCK_R rows into their
    # log-sum-exp, then write z - lse for a chunk of BLOCK_C columns.
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < M
    m_run = tl.full((BLOCK_R,), float("-inf"), dtype=tl.float32)
    s_run = tl.zeros((BLOCK_R,), dtype=tl.float32)
    tiles = tl.arange(0, BLOCK_T)
    for t0 in range(0, num_tiles, BLOCK_T):
        t_ok = (t0 + tiles) < num_tiles
        offs = (t0 + tiles).to(tl.int64)[None, :] * M + rows[:, None]
        ok = row_ok[:, None] & t_ok[None, :]
        pm = tl.load(pmax_ptr + offs, mask=ok, other=float("-inf"))
        ps = tl.load(psum_ptr + offs, mask=ok, other=0.0)
        m_new = tl.maximum(m_run, tl.max(pm, axis=1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s_run = s_run * tl.exp(m_run - m_safe) + tl.sum(ps * tl.exp(pm - m_safe[:, None]), axis=1)
        m_run = m_new
    lse = m_run + tl.log(s_run)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    ok = row_ok[:, None] & (cols < N)[None, :]
    offs = rows.to(tl.int64)[:, None] * N + cols[None, :]
    z = tl.load(z_ptr + offs, mask=ok, other=0.0)
    tl.store(y_ptr + offs, (z - lse[:, None]).to(y_ptr.dtype.element_ty), mask=ok)


@triton.jit
def log_softmax_dim_kernel(z_ptr, y_ptr, L, INNER, BLOCK_L: tl.constexpr, BLOCK_I: tl.constexpr):
    # log_softmax over the middle dim of a contiguous (OUTER, L, INNER) view: one program per
    # (outer index, block of inner indices); rows of INNER contiguous values are read per step.
    outer = tl.program_id(0).to(tl.int64)
    inner = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    inner_ok = inner < INNER
    base = outer * L * INNER
    ls = tl.arange(0, BLOCK_L)
    m_run = tl.full((BLOCK_I,), float("-inf"), dtype=tl.float32)
    s_run = tl.zeros((BLOCK_I,), dtype=tl.float32)
    for l0 in range(0, L, BLOCK_L):
        ok = ((l0 + ls) < L)[:, None] & inner_ok[None, :]
        offs = base + (l0 + ls).to(tl.int64)[:, None] * INNER + inner[None, :]
        z = tl.load(z_ptr + offs, mask=ok, other=float("-inf"))
        m_new = tl.maximum(m_run, tl.max(z, axis=0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s_run = s_run * tl.exp(m_run - m_safe) + tl.sum(tl.exp(z - m_safe[None, :]), axis=0)
        m_run = m_new
    lse = m_run + tl.log(s_run)
    for l0 in range(0, L, BLOCK_L):
        ok = ((l0 + ls) < L)[:, None] & inner_ok[None, :]
        offs = base + (l0 + ls).to(tl.int64)[:, None] * INNER + inner[None, :]
        z = tl.load(z_ptr + offs, mask=ok, other=0.0)
        tl.store(y_ptr + offs, (z - lse[None, :]).to(y_ptr.dtype.element_ty), mask=ok)


def _block(extent, largest):
    return max(16, min(largest, triton.next_power_of_2(extent)))


def fused_log_softmax_linear(input, weight, bias=None, dim=-1, dtype=None):
    if weight.dim() != 2 or input.shape[-1] != weight.shape[1]:
        raise ValueError("expected input (*, K) and weight (N, K)")
    N, K = weight.shape
    lead = tuple(input.shape[:-1])
    out_shape = lead + (N,)
    ndim = len(out_shape)
    d = dim + ndim if dim < 0 else dim
    if not 0 <= d < ndim:
        raise IndexError(f"dim {dim} out of range for a {ndim}-d result")
    out_dtype = dtype if dtype is not None else input.dtype
    x = input.reshape(-1, K)
    M = x.shape[0]
    y = torch.empty(out_shape, dtype=out_dtype, device=input.device)
    if y.numel() == 0:
        return y
    last = d == ndim - 1
    # float32 logits: written straight into the result when it is float32, else into a scratch buffer
    z = y.view(M, N) if out_dtype == torch.float32 else torch.empty((M, N), dtype=torch.float32,
                                                                   device=input.device)
    half = input.element_size() == 2
    block_m = _block(M, 128)
    block_n = _block(N, 128)
    block_k = _block(K, 64 if half else 32)
    num_pid_n = triton.cdiv(N, block_n)
    pmax = torch.empty((num_pid_n, M), dtype=torch.float32, device=input.device) if last else z
    psum = torch.empty((num_pid_n, M), dtype=torch.float32, device=input.device) if last else z
    upcast = input.dtype == torch.bfloat16 and input.device.type == "cpu"
    grid = (triton.cdiv(M, block_m) * num_pid_n,)
    linear_kernel[grid](x, weight, bias if bias is not None else weight, z, pmax, psum, M, N, K,
                        x.stride(0), x.stride(1), weight.stride(0), weight.stride(1),
                        HAS_BIAS=bias is not None, STATS=last, UPCAST=upcast,
                        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=GROUP_M,
                        num_warps=8 if block_m * block_n >= 128 * 128 else 4, num_stages=3)
    if last:
        block_c = min(1024, triton.next_power_of_2(N))
        block_r = max(1, min(4096 // block_c, triton.next_power_of_2(M)))
        block_t = min(64, triton.next_power_of_2(num_pid_n))
        finish_rows_kernel[(triton.cdiv(M, block_r), triton.cdiv(N, block_c))](
            z, pmax, psum, y, M, N, num_pid_n, BLOCK_R=block_r, BLOCK_C=block_c, BLOCK_T=block_t, num_warps=4)
    else:
        L = out_shape[d]
        inner = 1
        for s in out_shape[d + 1:]:
            inner *= s
        outer = y.numel() // (L * inner)
        block_i = min(256, triton.next_power_of_2(inner))
        block_l = max(1, min(4096 // block_i, triton.next_power_of_2(L)))
        log_softmax_dim_kernel[(outer, triton.cdiv(inner, block_i))](
            z, y, L, inner, BLOCK_L=block_l, BLOCK_I=block_i, num_warps=4)
    return y
