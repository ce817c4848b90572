import torch
import triton
import triton.language as tl


@triton.jit
def det_kernel(a_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # One program per matrix, held in registers. Gaussian elimination with partial pivoting: at
    # step j the row with the largest |a[i, j]|, i >= j (the first such on ties), is exchanged with
    # row j and eliminated from the rows below. The determinant is the product of the pivots,
    # negated once per exchange of two different rows.
    pid = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n) & (cols[None, :] < n)
    a = tl.load(a_ptr + pid * n * n + rows[:, None] * n + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    det = tl.full((), 1.0, tl.float32)
    for j in range(n):
        col = tl.sum(tl.where(cols[None, :] == j, a, 0.0), axis=1)
        cand = tl.where((rows >= j) & (rows < n), tl.abs(col), -1.0)
        best = tl.max(cand, axis=0)
        p = tl.min(tl.where(cand == best, rows, BLOCK), axis=0)
        a_j = tl.sum(tl.where(rows[:, None] == j, a, 0.0), axis=0)
        a_p = tl.sum(tl.where(rows[:, None] == p, a, 0.0), axis=0)
        pivot = tl.sum(tl.where(rows == p, col, 0.0), axis=0)
        col_j = tl.sum(tl.where(rows == j, col, 0.0), axis=0)
        col = tl.where(rows == p, col_j, col)
        mult = tl.where(rows > j, col / pivot, 0.0)
        a = tl.where(rows[:, None] == p, a_j[None, :], a)
        a = a - mult[:, None] * a_p[None, :]
        det = det * tl.where(p != j, -pivot, pivot)
    tl.store(out_ptr + pid, det.to(out_ptr.dtype.element_ty))


def det(A):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"A must have shape (*, n, n), got {tuple(A.shape)}")
    a = A.contiguous()
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    result = torch.empty(a.shape[:-2], dtype=a.dtype, device=a.device)
    if batch > 0:
        block = max(16, triton.next_power_of_2(n))
        num_warps = 4 if block <= 32 else (8 if block <= 64 else 16)
        det_kernel[(batch,)](a, result, n, BLOCK=block, num_warps=num_warps)
    return result
