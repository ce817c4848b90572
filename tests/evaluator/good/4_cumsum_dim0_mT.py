# kernelbench: 4_cumsum_dim0
# style: .mT views (scan the columns as rows of x.mT, write through out.mT), tl.cumsum with a carried running total, tl.reduce with a combine fn, x.stride() tuples, typing hints
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def row_cumsum_kernel(src_ptr, dst_ptr, length, s_row, s_col, d_row, d_col, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    src = src_ptr + row * s_row
    dst = dst_ptr + row * d_row
    carry = tl.zeros((), dtype=tl.float32)
    for start in range(0, length, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        live = idx < length
        v = tl.load(src + idx * s_col, mask=live, other=0.0).to(tl.float32)
        tl.store(dst + idx * d_col, (carry + tl.cumsum(v, axis=0)).to(dst_ptr.dtype.element_ty), mask=live)
        carry += tl.reduce(v, 0, _add)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super(ModelNew, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.dim() == 2, "expected a matrix"
        out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        # cumsum over dim 0 of x == cumsum over the last dim of x.mT; both views share storage
        xt, ot = x.mT, out.mT
        n_rows, length = xt.shape
        if out.numel() == 0:
            return out
        row_cumsum_kernel[(n_rows,)](xt, ot, length, *xt.stride(), *ot.stride(), BLOCK=256)
        return out
