# task: MatrixMultiply/matrix_vector_dot
# style: scalar uploads (torch.tensor([float(x)], device=...)), tl.atomic_add partial dot products, masks with other=, strided (transposed) A
import torch
import triton
import triton.language as tl


@triton.jit
def gemv_update_dot_kernel(A, x, y, alpha_ptr, beta_ptr, dot_acc,
                           n, stride_ar, stride_ac,
                           BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    rmask = rows < n

    acc = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for c0 in range(0, n, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        cmask = cols < n
        a = tl.load(A + rows[:, None] * stride_ar + cols[None, :] * stride_ac,
                    mask=rmask[:, None] & cmask[None, :], other=0.0).to(tl.float32)
        xv = tl.load(x + cols, mask=cmask, other=0.0).to(tl.float32)
        acc += tl.sum(a * xv[None, :], axis=1)

    alpha = tl.load(alpha_ptr)
    beta = tl.load(beta_ptr)
    y_old = tl.load(y + rows, mask=rmask, other=0.0).to(tl.float32)
    y_new = (alpha * acc + beta * y_old).to(y.dtype.element_ty)
    tl.store(y + rows, y_new, mask=rmask)

    # this block's share of dot(y_new, x), with y_new as stored
    x_rows = tl.load(x + rows, mask=rmask, other=0.0).to(tl.float32)
    partial = tl.sum(y_new.to(tl.float32) * x_rows, axis=0)
    tl.atomic_add(dot_acc, partial)


@triton.jit
def cast_scalar_kernel(src, dst):
    tl.store(dst, tl.load(src).to(dst.dtype.element_ty))


def matrix_vector_dot(A, x, y, alpha, beta):
    n = A.shape[0]
    assert A.shape == (n, n) and x.shape == (n,) and y.shape == (n,), "shape mismatch"
    dev = A.device
    alpha_t = torch.tensor([float(alpha)], device=dev)
    beta_t = torch.tensor([float(beta)], device=dev)
    dot_acc = torch.zeros(1, device=dev, dtype=torch.float32)
    result = torch.empty((), device=dev, dtype=A.dtype)

    BLOCK_R, BLOCK_C = 32, 64
    gemv_update_dot_kernel[(triton.cdiv(n, BLOCK_R),)](
        A, x, y, alpha_t, beta_t, dot_acc, n, A.stride(0), A.stride(1),
        BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C,
    )
    cast_scalar_kernel[(1,)](dot_acc, result)
    return result
