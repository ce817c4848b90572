# task: MatrixMultiply/addmm
# style: block pointers (tl.make_block_ptr / tl.advance), scalar uploads (torch.full((1,), v)), __main__ self-test, broadcast bias through stride-0 expand
import torch
import triton
import triton.language as tl


@triton.jit
def addmm_kernel(
    bias_ptr, a_ptr, b_ptr, c_ptr, alpha_ptr, beta_ptr,
    M, N, K,
    s_bias_m, s_bias_n,
    s_am, s_ak,
    s_bk, s_bn,
    s_cm, s_cn,
    USE_BIAS: tl.constexpr, F32_DOT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    a_blk = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(s_am, s_ak),
                              offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    b_blk = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(s_bk, s_bn),
                              offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        a = tl.load(a_blk, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_blk, boundary_check=(0, 1), padding_option="zero")
        if F32_DOT:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc)
        a_blk = tl.advance(a_blk, (0, BLOCK_K))
        b_blk = tl.advance(b_blk, (BLOCK_K, 0))

    alpha = tl.load(alpha_ptr)
    acc = acc * alpha
    if USE_BIAS:
        beta = tl.load(beta_ptr)
        bias_blk = tl.make_block_ptr(base=bias_ptr, shape=(M, N), strides=(s_bias_m, s_bias_n),
                                     offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                                     block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
        bias = tl.load(bias_blk, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        acc += beta * bias

    c_blk = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(s_cm, s_cn),
                              offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),
                              block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    tl.store(c_blk, acc.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


def addmm(input, mat1, mat2, beta=1, alpha=1, out=None):
    assert mat1.dim() == 2 and mat2.dim() == 2, "mat1 and mat2 must be matrices"
    M, K = mat1.shape
    K2, N = mat2.shape
    assert K == K2, f"cannot multiply {tuple(mat1.shape)} by {tuple(mat2.shape)}"

    # broadcast the bias to (M, N) as a view: stride 0 along repeated dims, nothing is copied
    bias = input.expand(M, N)
    if out is None:
        out = torch.empty((M, N), device=mat1.device, dtype=mat1.dtype)

    alpha_t = torch.full((1,), float(alpha), device=mat1.device, dtype=torch.float32)
    beta_t = torch.full((1,), float(beta), device=mat1.device, dtype=torch.float32)

    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    addmm_kernel[grid](
        bias, mat1, mat2, out, alpha_t, beta_t,
        M, N, K,
        bias.stride(0), bias.stride(1),
        mat1.stride(0), mat1.stride(1),
        mat2.stride(0), mat2.stride(1),
        out.stride(0), out.stride(1),
        USE_BIAS=beta != 0,
        F32_DOT=mat1.dtype == torch.bfloat16,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=4, num_stages=3,
    )
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    for (m, k, n, bshape, beta, alpha) in [(64, 80, 96, (96,), 1.0, 1.0), (37, 1001, 3, (37, 1), 0.0, 1.5),
                                          (1, 67, 33, (), 0.25, -1.0)]:
        bias = torch.randn(bshape, device=dev)
        a = torch.randn(m, k, device=dev)
        b = torch.randn(n, k, device=dev).t()
        got = addmm(bias, a, b, beta=beta, alpha=alpha)
        want = torch.addmm(bias, a, b, beta=beta, alpha=alpha)
        print(m, k, n, bshape, "max abs err", (got - want).abs().max().item())
