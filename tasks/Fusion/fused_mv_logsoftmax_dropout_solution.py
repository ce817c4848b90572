import torch
import triton
import triton.language as tl


@triton.jit
def mv_kernel(a_ptr, v_ptr, z_ptr, N, M, stride_an, stride_am, stride_v,
              BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr):
    # BLOCK_N rows per program; the row dot products accumulate in a float32 tile.
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < N
    cols = tl.arange(0, BLOCK_M)
    a_row = a_ptr + rows.to(tl.int64)[:, None] * stride_an
    acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        c = m0 + cols
        c_ok = c < M
        a = tl.load(a_row + c.to(tl.int64)[None, :] * stride_am, mask=row_ok[:, None] & c_ok[None, :], other=0.0)
        v = tl.load(v_ptr + c.to(tl.int64) * stride_v, mask=c_ok, other=0.0)
        acc += a.to(tl.float32) * v.to(tl.float32)[None, :]
    tl.store(z_ptr + rows, tl.sum(acc, axis=1), mask=row_ok)


@triton.jit
def log_softmax_dropout_kernel(z_ptr, y_ptr, N, p, scale, seed, DROPOUT: tl.constexpr, BLOCK: tl.constexpr):
    # One program: the log-sum-exp of z (online max and sum), then z - lse with dropout applied.
    offs = tl.arange(0, BLOCK)
    m_run = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    s_run = tl.zeros((BLOCK,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK):
        z = tl.load(z_ptr + n0 + offs, mask=n0 + offs < N, other=float("-inf"))
        m_new = tl.maximum(m_run, z)
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s_run = s_run * tl.exp(m_run - m_safe) + tl.exp(z - m_safe)
        m_run = m_new
    m = tl.max(m_run, axis=0)
    lse = m + tl.log(tl.sum(s_run * tl.exp(m_run - m), axis=0))
    for n0 in range(0, N, BLOCK):
        idx = n0 + offs
        ok = idx < N
        s = tl.load(z_ptr + idx, mask=ok, other=0.0) - lse
        if DROPOUT:
            keep = tl.rand(seed, idx) >= p
            s = tl.where(keep, s * scale, 0.0)
        tl.store(y_ptr + idx, s.to(y_ptr.dtype.element_ty), mask=ok)


def fused_mv_logsoftmax_dropout(input, vec, p=0.5, training=True, inplace=False, dim=0, *, out=None):
    if input.dim() != 2 or vec.dim() != 1 or input.shape[1] != vec.shape[0]:
        raise ValueError("expected input (n, m) and vec (m,)")
    if dim not in (0, -1):
        raise IndexError("dim must be 0 or -1 for the 1-D product")
    if not 0.0 <= p <= 1.0:
        raise ValueError("p must be in [0, 1]")
    n, m = input.shape
    y = torch.empty((n,), dtype=input.dtype, device=input.device)
    if n > 0:
        z = torch.empty((n,), dtype=torch.float32, device=input.device)
        block_n = 16
        block_m = min(256, max(16, triton.next_power_of_2(m)))
        mv_kernel[(triton.cdiv(n, block_n),)](input, vec, z, n, m, input.stride(0), input.stride(1), vec.stride(0),
                                              BLOCK_N=block_n, BLOCK_M=block_m, num_warps=4)
        dropout = bool(training) and p > 0.0
        seed = torch.randint(0, 2**31 - 1, (1,)).item() if dropout else 0
        scale = 1.0 / (1.0 - p) if p < 1.0 else 0.0
        block = min(4096, max(16, triton.next_power_of_2(n)))
        log_softmax_dropout_kernel[(1,)](z, y, n, float(p), scale, seed, DROPOUT=dropout, BLOCK=block,
                                         num_warps=8)
    if out is not None:
        out.copy_(y)
        return out
    return y
