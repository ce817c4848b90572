import torch
import triton
import triton.language as tl


@triton.jit
def cholesky_kernel(a_ptr, out_ptr, n, UPPER: tl.constexpr, BLOCK: tl.constexpr):
    # One program factors one matrix held in registers, right-looking: at step k, column k of the
    # trailing matrix scaled by 1/sqrt(a_kk) is column k of L, and its outer product is subtracted
    # from the trailing matrix. Column k of the working tile is overwritten with L[:, k].
    pid = tl.program_id(0).to(tl.int64)
    base = pid * n * n
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    inside = (rows[:, None] < n) & (cols[None, :] < n)
    offs = rows[:, None] * n + cols[None, :]
    a = tl.load(a_ptr + base + offs, mask=inside, other=0.0).to(tl.float32)
    for k in range(n):
        col = tl.sum(tl.where(cols[None, :] == k, a, 0.0), axis=1)
        diag = tl.sum(tl.where(rows == k, col, 0.0), axis=0)
        l = tl.where(rows >= k, col / tl.sqrt(diag), 0.0)
        a = tl.where(cols[None, :] == k, l[:, None], a - l[:, None] * l[None, :])
    lower = tl.where(cols[None, :] <= rows[:, None], a, 0.0)
    if UPPER:
        tl.store(out_ptr + base + offs, tl.trans(lower).to(out_ptr.dtype.element_ty), mask=inside)
    else:
        tl.store(out_ptr + base + offs, lower.to(out_ptr.dtype.element_ty), mask=inside)


def cholesky(A, upper=False, out=None):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"cholesky expects a (*, n, n) tensor, got shape {tuple(A.shape)}")
    a = A.contiguous()
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    result = torch.empty_like(a) if out is None else out
    if batch == 0 or n == 0:
        return result
    target = result if result.is_contiguous() else torch.empty_like(a)
    block = max(16, triton.next_power_of_2(n))
    num_warps = 4 if block <= 32 else (8 if block <= 64 else 16)
    cholesky_kernel[(batch,)](a, target, n, UPPER=bool(upper), BLOCK=block, num_warps=num_warps)
    if target is not result:
        result.copy_(target)
    return result
