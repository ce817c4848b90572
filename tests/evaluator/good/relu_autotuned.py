# task: Activation/relu
# style: autotuned, grid lambda, in-place handling, __main__ self-test
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 512}, num_warps=2),
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 4096}, num_warps=8),
    ],
    key=["n_elements"],
)
@triton.jit
def relu_kernel(
    x_ptr,
    out_ptr,
    n_elements,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    block_start = pid.to(tl.int64) * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    out = tl.where(x < 0.0, 0.0, x)  # keeps NaN like torch
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


def relu(input: torch.Tensor, inplace: bool = False) -> torch.Tensor:
    """ReLU computed by a Triton kernel. Supports inplace=True like torch.nn.functional.relu."""
    x = input if input.is_contiguous() else input.contiguous()
    n_elements = x.numel()
    if inplace and x is input:
        out = input
    else:
        out = torch.empty_like(x)
    if n_elements == 0:
        return input if inplace else out

    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    relu_kernel[grid](x, out, n_elements)

    if inplace:
        if out is not input:
            input.copy_(out)
        return input
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for shape in [(33, 257), (4, 9, 130), (8192, 8192)]:
        for dtype in [torch.float32, torch.float16]:
            x = torch.randn(shape, device=device, dtype=dtype)
            ref = torch.nn.functional.relu(x)
            out = relu(x)
            assert torch.allclose(out, ref), f"mismatch for {shape} {dtype}"
            y = x.clone()
            ret = relu(y, inplace=True)
            assert ret is y and torch.equal(y, ref)
            print(f"relu {shape} {dtype}: OK")
    print("All tests passed!")
