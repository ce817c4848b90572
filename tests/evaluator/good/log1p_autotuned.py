# task: Math/log1p
# style: autotuned (several configs, key), kernel_function entry, helper @triton.jit, grid lambda
import torch
import triton
import triton.language as tl


@triton.jit
def _log1p_accurate(x):
    # Goldberg's trick: with u = fl(1 + x), log(u) * x / (u - 1) cancels the rounding of 1 + x,
    # so tiny |x| keeps full relative accuracy.
    u = 1.0 + x
    d = u - 1.0
    r = tl.log(u) * (x / tl.where(d == 0.0, 1.0, d))
    r = tl.where(d == 0.0, x, r)              # u == 1 exactly: log1p(x) == x (also keeps -0.0)
    r = tl.where(x == float("inf"), x, r)     # inf / inf would give NaN
    return r


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 2048}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 4096}, num_warps=8),
    ],
    key=["n_elements"],
)
@triton.jit
def log1p_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offsets, _log1p_accurate(x).to(out_ptr.dtype.element_ty), mask=mask)


def kernel_function(input, out=None):
    x = input.contiguous()
    result = torch.empty_like(x) if out is None else out
    n_elements = x.numel()
    if n_elements == 0:
        return result
    dst = result if result.is_contiguous() else torch.empty_like(x)
    log1p_kernel[lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)](x, dst, n_elements)
    if dst is not result:
        result.copy_(dst)
    return result
