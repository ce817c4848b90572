# task: Reduce/mean
# style: 2-D block pointers with tl.advance along the reduced axis, kernel_function entry, grid lambda, asserts
import torch
import triton
import triton.language as tl


@triton.jit
def mean_rows_kernel(x_ptr, y_ptr, M, K, inv_k, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    x_blk = tl.make_block_ptr(
        base=x_ptr,
        shape=(M, K),
        strides=(K, 1),
        offsets=(pid * BLOCK_M, 0),
        block_shape=(BLOCK_M, BLOCK_K),
        order=(1, 0),
    )
    acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        acc += tl.load(x_blk, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        x_blk = tl.advance(x_blk, (0, BLOCK_K))
    mean = tl.sum(acc, axis=1) * inv_k
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    tl.store(y_ptr + rows, mean.to(y_ptr.dtype.element_ty), mask=rows < M)


def kernel_function(input_tensor, dim, keepdim=False, dtype=None, out=None):
    assert input_tensor.is_floating_point(), "mean needs a floating point input"
    assert out is None, "out= is not supported"
    nd = input_tensor.dim()
    dims = [dim] if isinstance(dim, int) else list(dim)
    reduced = sorted(set(d % nd for d in dims))
    kept = [d for d in range(nd) if d not in reduced]
    x = input_tensor.permute(kept + reduced).contiguous()
    M, K = 1, 1
    for d in kept:
        M *= input_tensor.shape[d]
    for d in reduced:
        K *= input_tensor.shape[d]
    if keepdim:
        out_shape = [1 if d in reduced else input_tensor.shape[d] for d in range(nd)]
    else:
        out_shape = [input_tensor.shape[d] for d in kept]
    y = torch.empty(out_shape, dtype=dtype or input_tensor.dtype, device=input_tensor.device)
    if M == 0:
        return y
    BLOCK_K = min(512, triton.next_power_of_2(max(K, 1)))
    BLOCK_M = max(1, min(32, 4096 // BLOCK_K))
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]),)
    mean_rows_kernel[grid](x, y, M, K, 1.0 / K if K else float("nan"), BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K)
    return y
