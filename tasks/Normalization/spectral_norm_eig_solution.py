import torch
import triton
import triton.language as tl

# Power-iteration steps. The estimate ||A v|| (v a unit vector) approaches |lambda_1| by a factor
# (lambda_2 / lambda_1) ** 2 <= 0.25 per step on the test matrices, so 24 steps leave it exact to
# float32 precision even from a start vector nearly orthogonal to the dominant eigenvector.
ITERATIONS = 24
SMALL_N = 64  # matrices up to this size stay in registers


@triton.jit
def power_iteration_kernel(a_ptr, work_ptr, out_ptr, n, stride_ab, stride_am, stride_an,
                           ITERATIONS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # one program per matrix: v <- A (v / ||v||) repeated, the vector kept in a two-slot scratch
    # buffer (work[b, 0] and work[b, 1]); the result is ||A u|| for the final unit vector u
    b = tl.program_id(0).to(tl.int64)
    a_base = a_ptr + b * stride_ab
    w_base = work_ptr + b * 2 * n
    cols0 = tl.arange(0, BLOCK_N)
    rows0 = tl.arange(0, BLOCK_M)

    # a fixed start vector with no special alignment: v[i] = 1 + 0.5 * sin(i)
    sq0 = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for c0 in range(0, n, BLOCK_N):
        cols = c0 + cols0
        v0 = tl.where(cols < n, 1.0 + 0.5 * tl.sin(cols.to(tl.float32)), 0.0)
        tl.store(w_base + cols, v0, mask=cols < n)
        sq0 += v0 * v0
    inv_norm = 1.0 / tl.sqrt(tl.sum(sq0, axis=0))
    norm = tl.sqrt(tl.sum(sq0, axis=0))
    tl.debug_barrier()

    for it in range(ITERATIONS):
        src = w_base + (it % 2) * n
        dst = w_base + ((it + 1) % 2) * n
        sq = tl.zeros((BLOCK_M,), dtype=tl.float32)
        for r0 in range(0, n, BLOCK_M):
            rows = r0 + rows0
            row_ok = rows < n
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for c0 in range(0, n, BLOCK_N):
                cols = c0 + cols0
                col_ok = cols < n
                a = tl.load(a_base + rows.to(tl.int64)[:, None] * stride_am + cols.to(tl.int64)[None, :] * stride_an,
                            mask=row_ok[:, None] & col_ok[None, :], other=0.0).to(tl.float32)
                v = tl.load(src + cols, mask=col_ok, other=0.0)
                acc += a * v[None, :]
            y = tl.where(row_ok, tl.sum(acc, axis=1) * inv_norm, 0.0)
            tl.store(dst + rows, y, mask=row_ok)
            sq += y * y
        norm = tl.sqrt(tl.sum(sq, axis=0))
        inv_norm = 1.0 / tl.maximum(norm, 1e-30)
        # the next step reads the whole vector this step wrote
        tl.debug_barrier()
    tl.store(out_ptr + b, norm.to(out_ptr.dtype.element_ty))


@triton.jit
def power_iteration_small_kernel(a_ptr, out_ptr, batch, n, stride_ab, stride_am, stride_an,
                                 ITERATIONS: tl.constexpr, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    # GROUP whole matrices (n <= BLOCK) per program, held in registers for every step. A is
    # symmetric, so A @ r can be formed by reducing over either axis: steps alternate between
    # reducing over columns (giving a row-indexed vector) and over rows (a column-indexed one),
    # and no vector ever changes layout.
    mats = tl.program_id(0).to(tl.int64) * GROUP + tl.arange(0, GROUP)
    idx = tl.arange(0, BLOCK)
    ok = idx < n
    mask = (mats < batch)[:, None, None] & ok[None, :, None] & ok[None, None, :]
    a = tl.load(a_ptr + mats[:, None, None] * stride_ab + idx.to(tl.int64)[None, :, None] * stride_am
                + idx.to(tl.int64)[None, None, :] * stride_an, mask=mask, other=0.0).to(tl.float32)
    # a fixed start vector with no special alignment: v[i] = 1 + 0.5 * sin(i)
    start = tl.where(ok, 1.0 + 0.5 * tl.sin(idx.to(tl.float32)), 0.0)
    col = tl.zeros((GROUP, BLOCK), dtype=tl.float32) + start[None, :]
    for it in range(ITERATIONS // 2):
        inv = 1.0 / tl.maximum(tl.sqrt(tl.sum(col * col, axis=1)), 1e-30)
        row = tl.sum(a * col[:, None, :], axis=2) * inv[:, None]
        inv = 1.0 / tl.maximum(tl.sqrt(tl.sum(row * row, axis=1)), 1e-30)
        col = tl.sum(a * row[:, :, None], axis=1) * inv[:, None]
    # col = A u for the unit vector u = row / ||row||
    result = tl.sqrt(tl.sum(col * col, axis=1))
    tl.store(out_ptr + mats, result.to(out_ptr.dtype.element_ty), mask=mats < batch)


def spectral_norm_eig(A, *, out=None):
    n = A.shape[-1]
    if A.dim() < 2 or A.shape[-2] != n:
        raise ValueError("A must be (*, n, n)")
    batch_shape = list(A.shape[:-2])
    mats = A.reshape(-1, n, n)
    batch = mats.shape[0]
    result = torch.empty(batch_shape, device=A.device, dtype=A.dtype)
    if 0 < batch and n <= SMALL_N:
        block = max(16, triton.next_power_of_2(n))
        group = max(1, min(8, 8192 // (block * block), triton.next_power_of_2(batch)))
        power_iteration_small_kernel[(triton.cdiv(batch, group),)](
            mats, result, batch, n, mats.stride(0), mats.stride(1), mats.stride(2),
            ITERATIONS=ITERATIONS, GROUP=group, BLOCK=block, num_warps=4)
    elif batch > 0:
        work = torch.empty((batch, 2, n), device=A.device, dtype=torch.float32)
        block_n = max(16, min(256, triton.next_power_of_2(n)))
        block_m = max(16, min(64, 8192 // block_n, triton.next_power_of_2(n)))
        power_iteration_kernel[(batch,)](mats, work, result, n, mats.stride(0), mats.stride(1), mats.stride(2),
                                         ITERATIONS=ITERATIONS, BLOCK_M=block_m, BLOCK_N=block_n, num_warps=8)
    if out is not None:
        out.copy_(result)
        return out
    return result
