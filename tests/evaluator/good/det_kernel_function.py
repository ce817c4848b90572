# task: LinearAlgebra/det
# style: entry named kernel_function, complex dtypes named in a dtype check (torch.complex64), typing hints, asserts with messages, __main__ self-test; one program per matrix, partial pivoting in registers with tl.argmax
import torch
import triton
import triton.language as tl


@triton.jit
def _lu_det_kernel(a_ptr, det_ptr, n, stride_b, stride_r, stride_c, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    inside = (rows[:, None] < n) & (cols[None, :] < n)
    base = a_ptr + pid.to(tl.int64) * stride_b
    m = tl.load(base + rows[:, None] * stride_r + cols[None, :] * stride_c, mask=inside, other=0.0).to(tl.float32)

    det = 1.0
    for k in range(0, n):
        col = tl.sum(tl.where(cols[None, :] == k, m, 0.0), axis=1)
        candidates = tl.where((rows >= k) & (rows < n), tl.abs(col), -1.0)
        p = tl.argmax(candidates, axis=0)
        pivot = tl.sum(tl.where(rows == p, col, 0.0), axis=0)

        # swap rows k and p
        row_k = tl.sum(tl.where(rows[:, None] == k, m, 0.0), axis=0)
        row_p = tl.sum(tl.where(rows[:, None] == p, m, 0.0), axis=0)
        m = tl.where(rows[:, None] == k, row_p[None, :], tl.where(rows[:, None] == p, row_k[None, :], m))
        col = tl.where(rows == k, pivot, tl.where(rows == p, tl.sum(tl.where(rows == k, col, 0.0), axis=0), col))
        if p != k:
            det = -det
        det = det * pivot

        # eliminate below the pivot
        safe = tl.where(pivot != 0.0, pivot, 1.0)
        factor = tl.where(rows > k, col / safe, 0.0)
        m = m - factor[:, None] * row_p[None, :]

    tl.store(det_ptr + pid, det)


def kernel_function(A: torch.Tensor) -> torch.Tensor:
    assert A.dtype not in (torch.complex64, torch.complex128), "complex determinants are not supported"
    assert A.dtype == torch.float32, f"expected float32, got {A.dtype}"
    assert A.dim() >= 2 and A.shape[-1] == A.shape[-2], f"expected (*, n, n), got {tuple(A.shape)}"

    n = A.shape[-1]
    batch_shape = A.shape[:-2]
    mats = A.reshape(-1, n, n)
    count = mats.shape[0]
    det = torch.empty(batch_shape, device=A.device, dtype=A.dtype)
    if count == 0:
        return det
    BLOCK = max(16, triton.next_power_of_2(n))
    _lu_det_kernel[(count,)](mats, det, n, mats.stride(0), mats.stride(1), mats.stride(2),
                             BLOCK=BLOCK, num_warps=4 if BLOCK <= 64 else 8)
    return det


if __name__ == "__main__":
    for shape in [(3, 16, 16), (2, 3, 10, 10), (1, 1), (1, 3, 13, 13), (4, 100, 100)]:
        A = torch.randn(shape, dtype=torch.float32) * 2.0 / shape[-1] ** 0.5
        got = kernel_function(A)
        ref = torch.linalg.det(A)
        print(shape, "max rel err:", ((got - ref).abs() / ref.abs().clamp_min(1e-6)).max().item())
