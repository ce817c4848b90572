# kernelbench: 2_linear_gelu
# style: block pointers (tl.make_block_ptr / tl.advance), weight passed as a .T view (strides, no copy), bias + exact erf GELU epilogue, __main__ self-test
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_gelu_fwd(x_ptr, wt_ptr, b_ptr, y_ptr, M, N, K,
                    stride_xm, stride_xk, stride_wk, stride_wn, stride_ym, stride_yn,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x_blk = tl.make_block_ptr(base=x_ptr, shape=(M, K), strides=(stride_xm, stride_xk),
                              offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    # W^T is (K, N); for nn.Linear's (N, K) weight its fast dim is K, hence order=(0, 1)
    w_blk = tl.make_block_ptr(base=wt_ptr, shape=(K, N), strides=(stride_wk, stride_wn),
                              offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N), order=(0, 1))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(x_blk, boundary_check=(0, 1), padding_option="zero")
        w = tl.load(w_blk, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(a, w)
        x_blk = tl.advance(x_blk, (0, BLOCK_K))
        w_blk = tl.advance(w_blk, (BLOCK_K, 0))

    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc += tl.load(b_ptr + cols, mask=cols < N, other=0.0)[None, :]
    y = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))

    y_blk = tl.make_block_ptr(base=y_ptr, shape=(M, N), strides=(stride_ym, stride_yn),
                              offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N), block_shape=(BLOCK_M, BLOCK_N),
                              order=(1, 0))
    tl.store(y_blk, y.to(y_ptr.dtype.element_ty), boundary_check=(0, 1))


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        M, K = x.shape
        wt = self.linear.weight.T          # (K, N) view of the (N, K) parameter
        N = wt.shape[1]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        BM, BN, BK = 32, 32, 32
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        linear_gelu_fwd[grid](x, wt, self.linear.bias, y, M, N, K,
                              x.stride(0), x.stride(1), wt.stride(0), wt.stride(1), y.stride(0), y.stride(1),
                              BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK)
        return y


if __name__ == "__main__":
    torch.manual_seed(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    ref = nn.Sequential(nn.Linear(64, 80), nn.GELU()).to(dev)
    mine = ModelNew(64, 80).to(dev)
    mine.linear.load_state_dict(ref[0].state_dict())
    x = torch.randn(48, 64, device=dev)
    with torch.no_grad():
        print("max abs err:", (mine(x) - ref(x)).abs().max().item())
