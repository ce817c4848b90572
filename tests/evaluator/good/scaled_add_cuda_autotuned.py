# kernelbench: 4_scaled_add_cuda
# style: ModelNew for a problem whose get_inputs calls .cuda(), autotune over block sizes, scale kept as a Python float
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024}, num_warps=8)], key=["n"])
@triton.jit
def add_one_scale(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, (x + 1.0) * factor, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features, scale):
        super().__init__()
        self.features = features
        self.factor = float(scale)

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        add_one_scale[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n, self.factor)
        return y
