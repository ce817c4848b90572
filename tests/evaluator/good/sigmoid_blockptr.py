# task: Activation/sigmoid
# style: block pointers (tl.make_block_ptr / tl.advance), kernel_function entry, tl.static_range unroll, type hints, def grid(meta)
from typing import Optional

import torch
import triton
import triton.language as tl


@triton.jit
def sigmoid_kernel(
    x_ptr,
    y_ptr,
    n_elements,
    BLOCK_SIZE: tl.constexpr,
    TILES_PER_PROGRAM: tl.constexpr,
):
    pid = tl.program_id(0)
    start = pid * BLOCK_SIZE * TILES_PER_PROGRAM
    x_block = tl.make_block_ptr(
        base=x_ptr, shape=(n_elements,), strides=(1,), offsets=(start,),
        block_shape=(BLOCK_SIZE,), order=(0,),
    )
    y_block = tl.make_block_ptr(
        base=y_ptr, shape=(n_elements,), strides=(1,), offsets=(start,),
        block_shape=(BLOCK_SIZE,), order=(0,),
    )
    for _ in tl.static_range(TILES_PER_PROGRAM):
        x = tl.load(x_block, boundary_check=(0,), padding_option="zero").to(tl.float32)
        # numerically stable logistic: exp(-|x|) never overflows
        z = tl.exp(-tl.abs(x))
        pos = 1.0 / (1.0 + z)
        y = tl.where(x >= 0, pos, z * pos)
        tl.store(y_block, y.to(y_ptr.dtype.element_ty), boundary_check=(0,))
        x_block = tl.advance(x_block, (BLOCK_SIZE,))
        y_block = tl.advance(y_block, (BLOCK_SIZE,))


def kernel_function(input: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    x = input.contiguous()
    n = x.numel()
    y = torch.empty_like(x)
    if n == 0:
        return y if out is None else out

    def grid(meta):
        return (triton.cdiv(n, meta["BLOCK_SIZE"] * meta["TILES_PER_PROGRAM"]),)

    sigmoid_kernel[grid](x, y, n, BLOCK_SIZE=1024, TILES_PER_PROGRAM=4, num_warps=4)
    if out is not None:
        out.copy_(y)
        return out
    return y
