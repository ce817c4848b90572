import torch
import triton
import triton.language as tl


@triton.jit
def back_substitute_add_kernel(a_ptr, b_ptr, y_ptr, out_ptr, n, k, alpha,
                               y_sb, y_sr, y_sc,
                               BLOCK: tl.constexpr, BLOCK_K: tl.constexpr):
    # One program solves one matrix for one block of right-hand-side columns. The working tile holds
    # b; from the last row up, row j is divided by U[j, j] and becomes x[j], and column j of U (above
    # the diagonal, read from memory: the matrix stays in cache) removes it from the rows above.
    pid = tl.program_id(0).to(tl.int64)
    cb = tl.program_id(1)
    rows = tl.arange(0, BLOCK)
    rhs = cb * BLOCK_K + tl.arange(0, BLOCK_K)
    a_base = a_ptr + pid * n * n
    mask = (rows[:, None] < n) & (rhs[None, :] < k)
    offs = pid * n * k + rows[:, None] * k + rhs[None, :]
    x = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    for jj in range(n):
        j = n - 1 - jj
        col = tl.load(a_base + rows * n + j, mask=rows < j, other=0.0).to(tl.float32)
        diag = tl.load(a_base + j * n + j).to(tl.float32)
        x_j = tl.sum(tl.where(rows[:, None] == j, x, 0.0), axis=0) / diag
        x = tl.where(rows[:, None] == j, x_j[None, :], x - col[:, None] * x_j[None, :])
    y_offs = pid * y_sb + rows[:, None] * y_sr + rhs[None, :] * y_sc
    y = tl.load(y_ptr + y_offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (x + alpha * y).to(out_ptr.dtype.element_ty), mask=mask)


def solve_and_add_scaled_vector(A: torch.Tensor, b: torch.Tensor, y: torch.Tensor, alpha: float):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"A must have shape (*, n, n), got {tuple(A.shape)}")
    if b.dim() != A.dim() or b.shape[-2] != A.shape[-1] or tuple(b.shape[:-2]) != tuple(A.shape[:-2]):
        raise ValueError("b must have shape (*, n, k) with A's batch dimensions")
    a = A.contiguous()
    rhs = b.contiguous()
    n, k = rhs.shape[-2], rhs.shape[-1]
    batch = rhs.numel() // max(1, n * k)
    out = torch.empty_like(rhs)
    if out.numel() == 0:
        return out
    # y broadcast to (batch, n, k) as a view: broadcast dimensions get stride 0.
    yb = y.expand(rhs.shape).reshape(batch, n, k)
    block = max(16, triton.next_power_of_2(n))
    block_k = min(64, max(16, triton.next_power_of_2(k)))
    num_warps = 4 if block * block_k <= 2048 else 8
    grid = (batch, triton.cdiv(k, block_k))
    back_substitute_add_kernel[grid](a, rhs, yb, out, n, k, float(alpha),
                                     yb.stride(0), yb.stride(1), yb.stride(2),
                                     BLOCK=block, BLOCK_K=block_k, num_warps=num_warps)
    return out
