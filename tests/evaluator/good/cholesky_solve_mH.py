# task: LinearAlgebra/cholesky_solve
# style: .mH view for the upper factor, complex dtypes named in a dtype check (torch.complex32/complex64), x.stride() tuples, masks with other=; forward then backward substitution in registers, one program per system
import torch
import triton
import triton.language as tl


@triton.jit
def chol_solve_kernel(l_ptr, b_ptr, x_ptr, n, k,
                      sl_b, sl_r, sl_c,
                      sb_b, sb_r, sb_c,
                      sx_b, sx_r, sx_c,
                      BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    r = tl.arange(0, BN)
    c = tl.arange(0, BN)
    kk = tl.arange(0, BK)
    row_ok = r < n

    L = tl.load(l_ptr + pid * sl_b + r[:, None] * sl_r + c[None, :] * sl_c,
                mask=row_ok[:, None] & (c[None, :] < n), other=0.0).to(tl.float32)
    rhs_mask = row_ok[:, None] & (kk[None, :] < k)
    Y = tl.load(b_ptr + pid * sb_b + r[:, None] * sb_r + kk[None, :] * sb_c, mask=rhs_mask, other=0.0).to(tl.float32)

    # L Y = B, column by column of L
    for i in range(0, n):
        l_col = tl.sum(tl.where(c[None, :] == i, L, 0.0), axis=1)            # L[:, i]
        l_ii = tl.sum(tl.where(r == i, l_col, 0.0), axis=0)
        y_i = tl.sum(tl.where(r[:, None] == i, Y, 0.0), axis=0) / l_ii        # Y[i, :]
        Y = tl.where(r[:, None] == i, y_i[None, :], Y)
        Y = Y - tl.where(r[:, None] > i, l_col[:, None] * y_i[None, :], 0.0)

    # L^T X = Y, from the last row up; column i of L^T is row i of L
    for t in range(0, n):
        i = n - 1 - t
        l_row = tl.sum(tl.where(r[:, None] == i, L, 0.0), axis=0)            # L[i, :] indexed by c
        l_ii = tl.sum(tl.where(c == i, l_row, 0.0), axis=0)
        x_i = tl.sum(tl.where(r[:, None] == i, Y, 0.0), axis=0) / l_ii
        Y = tl.where(r[:, None] == i, x_i[None, :], Y)
        Y = Y - tl.where(r[:, None] < i, l_row[:, None] * x_i[None, :], 0.0)

    tl.store(x_ptr + pid * sx_b + r[:, None] * sx_r + kk[None, :] * sx_c, Y.to(x_ptr.dtype.element_ty), mask=rhs_mask)


def cholesky_solve(B, L, upper=False, out=None):
    if B.dtype in (torch.complex32, torch.complex64, torch.complex128) or L.is_complex():
        raise NotImplementedError("complex Cholesky factors are not supported")
    assert out is None, "out= is not supported"
    assert L.shape[-1] == L.shape[-2] == B.shape[-2], "L must be (*, n, n) and B (*, n, k)"

    # A = U^H U = L L^H: the upper factor's conjugate transpose is the lower one (a view, no copy)
    lower = L.mH if upper else L
    n, k = B.shape[-2], B.shape[-1]
    Lb = lower.reshape(-1, n, n)
    Bb = B.reshape(-1, n, k)
    X = torch.empty(B.shape, device=B.device, dtype=B.dtype)
    Xb = X.view(-1, n, k)
    batch = Bb.shape[0]
    if batch == 0 or n == 0 or k == 0:
        return X

    BN = max(16, triton.next_power_of_2(n))
    BK = max(16, triton.next_power_of_2(k))
    chol_solve_kernel[(batch,)](Lb, Bb, Xb, n, k, *Lb.stride(), *Bb.stride(), *Xb.stride(), BN=BN, BK=BK)
    return X
