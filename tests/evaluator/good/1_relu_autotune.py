# kernelbench: 1_relu
# style: autotuned (several configs, key), grid lambda with triton.cdiv, masks with other=, typing hints
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 128}, num_warps=1),
        triton.Config({"BLOCK_SIZE": 512}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 4096}, num_warps=8),
    ],
    key=["n_elements"],
)
@triton.jit
def relu_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.where(x < 0, 0.0, x)  # keeps NaN, like torch.relu
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    """ReLU computed by a Triton kernel."""

    def __init__(self) -> None:
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n_elements = x.numel()
        if n_elements == 0:
            return y
        grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
        relu_kernel[grid](x, y, n_elements)
        return y
