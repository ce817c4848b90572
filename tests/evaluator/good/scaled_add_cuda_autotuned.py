# kernelbench: 4_scaled_add_cuda
# style: ModelNew for a problem whose get_inputs calls .cuda(), autotune over 2-D tiles, scale kept as a Python float
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"ROWS": 8, "COLS": 64}), triton.Config({"ROWS": 32, "COLS": 32}, num_warps=8)],
                 key=["rows", "cols"])
@triton.jit
def shifted_scale_tiles(src, dst, rows, cols, factor, ROWS: tl.constexpr, COLS: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    c = tl.program_id(1) * COLS + tl.arange(0, COLS)[None, :]
    inside = (r < rows) & (c < cols)
    v = tl.load(src + r * cols + c, mask=inside, other=0.0)
    tl.store(dst + r * cols + c, v * factor + factor, mask=inside)


class ModelNew(nn.Module):
    def __init__(self, features, scale):
        super().__init__()
        self.factor = float(scale)

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        cols = x.shape[-1]
        rows = x.numel() // cols
        shifted_scale_tiles[lambda meta: (triton.cdiv(rows, meta["ROWS"]), triton.cdiv(cols, meta["COLS"]))](
            x, out, rows, cols, self.factor)
        return out
