# kernelbench: 3_scaled_row_sum
# style: scalar upload (torch.tensor([float(self.scale)], device=x.device)), tl.atomic_add of per-chunk partial sums, tl.reduce with a combine fn, tl.program_id(axis=1), x.stride() tuple
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _plus(a, b):
    return a + b


@triton.jit
def scaled_row_sum_kernel(x_ptr, scale_ptr, out_ptr, n_cols, stride_r, stride_c, BLOCK: tl.constexpr):
    row = tl.program_id(axis=0)
    chunk = tl.program_id(axis=1)
    cols = chunk * BLOCK + tl.arange(0, BLOCK)
    vals = tl.load(x_ptr + row * stride_r + cols * stride_c, mask=cols < n_cols, other=0.0).to(tl.float32)
    partial = tl.reduce(vals, 0, _plus)
    scale = tl.load(scale_ptr)
    tl.atomic_add(out_ptr + row, partial * scale)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super(ModelNew, self).__init__()
        self.scale = scale

    def forward(self, x):
        assert x.dim() == 2, "expected a (rows, cols) input"
        rows, cols = x.shape
        out = torch.zeros((rows,), device=x.device, dtype=torch.float32)
        scale = torch.tensor([float(self.scale)], device=x.device, dtype=torch.float32)
        BLOCK = 128
        sr, sc = x.stride()
        scaled_row_sum_kernel[(rows, triton.cdiv(cols, BLOCK))](x, scale, out, cols, sr, sc, BLOCK=BLOCK)
        return out
