# task: Activation/leaky_relu
# style: kernel_function entry, scalar upload (torch.full), __main__ self-test
import torch
import triton
import triton.language as tl


@triton.jit
def _leaky_relu_fwd(X, Y, SLOPE, N, BLOCK: tl.constexpr):
    # negative_slope lives in a 1-element device tensor
    slope = tl.load(SLOPE)
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(X + offs, mask=m).to(tl.float32)
    y = tl.where(x >= 0, x, x * slope)
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=m)


def kernel_function(input, negative_slope=0.01, inplace=False):
    """Leaky ReLU: y = x if x >= 0 else negative_slope * x."""
    assert input.is_floating_point(), "leaky_relu expects a floating point tensor"
    x = input.contiguous()
    N = x.numel()
    out = x if (inplace and x is input) else torch.empty_like(x)
    slope_t = torch.full((1,), negative_slope, device=x.device, dtype=torch.float32)
    BLOCK = 1024
    grid = (triton.cdiv(N, BLOCK),)
    if N > 0:
        _leaky_relu_fwd[grid](x, out, slope_t, N, BLOCK=BLOCK, num_warps=4)
    if not inplace:
        return out
    if out is not input:
        input.copy_(out)
    return input


if __name__ == "__main__":
    import torch.nn.functional as F

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(4, 9, 130, device=dev)
    print("max diff (default):", (kernel_function(x) - F.leaky_relu(x)).abs().max().item())
    y = x.clone()
    kernel_function(y, negative_slope=0.2, inplace=True)
    print("in-place ok:", torch.allclose(y, F.leaky_relu(x, 0.2)))
    h = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
    print("fp16 ok:", torch.allclose(kernel_function(h, 0.1), F.leaky_relu(h, 0.1), atol=1e-3, rtol=1e-3))
