# task: Reduce/sum
# style: dataclass launch-config helper, Tuple/Optional type hints, permute + .contiguous() to a (rows, K) problem, 2-D tiles
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple, Union

import torch
import triton
import triton.language as tl


@dataclass(frozen=True)
class ReduceConfig:
    BLOCK_M: int
    BLOCK_K: int
    num_warps: int

    @staticmethod
    def for_problem(M: int, K: int) -> "ReduceConfig":
        block_k = min(triton.next_power_of_2(max(K, 1)), 1024)
        block_m = max(1, min(triton.next_power_of_2(max(M, 1)), 4096 // block_k, 64))
        warps = 8 if block_m * block_k >= 4096 else 4
        return ReduceConfig(block_m, block_k, warps)


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, M, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    row_off = rows.to(tl.int64) * K
    acc = tl.zeros([BLOCK_M, BLOCK_K], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        cols = k0 + tl.arange(0, BLOCK_K)
        mask = row_mask[:, None] & (cols < K)[None, :]
        acc += tl.load(x_ptr + row_off[:, None] + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=1)
    tl.store(out_ptr + rows, total.to(out_ptr.dtype.element_ty), mask=row_mask)


def _normalize_dims(dim: Union[int, Sequence[int]], ndim: int) -> Tuple[int, ...]:
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    norm = tuple(sorted({d % ndim for d in dims})) if ndim > 0 else ()
    assert len(norm) == len(dims), "repeated dims"
    return norm


def sum(input: torch.Tensor, dim, keepdim: bool = False, dtype: Optional[torch.dtype] = None) -> torch.Tensor:
    ndim = input.dim()
    red = _normalize_dims(dim, ndim)
    kept = tuple(d for d in range(ndim) if d not in red)
    # kept dims first, reduced dims last -> a row-major (M, K) matrix
    x = input.permute(*(kept + red)).contiguous()
    M = 1
    for d in kept:
        M *= input.shape[d]
    K = 1
    for d in red:
        K *= input.shape[d]
    out_dtype = dtype if dtype is not None else input.dtype
    if keepdim:
        out_shape = tuple(1 if d in red else input.shape[d] for d in range(ndim))
    else:
        out_shape = tuple(input.shape[d] for d in kept)
    out = torch.empty(out_shape, dtype=out_dtype, device=input.device)
    if M == 0:
        return out
    cfg = ReduceConfig.for_problem(M, K)
    row_sum_kernel[(triton.cdiv(M, cfg.BLOCK_M),)](
        x, out, M, K, BLOCK_M=cfg.BLOCK_M, BLOCK_K=cfg.BLOCK_K, num_warps=cfg.num_warps)
    return out
