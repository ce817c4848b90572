# task: Math/rsqrt
# style: block pointers (tl.make_block_ptr), def grid(meta), asserts, .numel()/.view(-1)
import torch
import triton
import triton.language as tl


@triton.jit
def _rsqrt_kernel(in_ptr, out_ptr, numel, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    src = tl.make_block_ptr(base=in_ptr, shape=(numel,), strides=(1,), offsets=(pid * BLOCK_SIZE,),
                            block_shape=(BLOCK_SIZE,), order=(0,))
    dst = tl.make_block_ptr(base=out_ptr, shape=(numel,), strides=(1,), offsets=(pid * BLOCK_SIZE,),
                            block_shape=(BLOCK_SIZE,), order=(0,))
    x = tl.load(src, boundary_check=(0,), padding_option="zero").to(tl.float32)
    # IEEE behaviour: 1/sqrt(+0) = +inf, 1/sqrt(-0) = -inf, negative/NaN -> NaN, 1/sqrt(inf) = 0
    y = 1.0 / tl.sqrt(x)
    tl.store(dst, y.to(out_ptr.dtype.element_ty), boundary_check=(0,))


def rsqrt(input: torch.Tensor, out=None) -> torch.Tensor:
    assert input.is_floating_point(), "rsqrt: expected a floating point tensor"
    flat_in = input.contiguous().view(-1)
    flat_out = torch.empty_like(flat_in)
    numel = flat_in.numel()

    def grid(meta):
        return (triton.cdiv(numel, meta["BLOCK_SIZE"]),)

    if numel:
        _rsqrt_kernel[grid](flat_in, flat_out, numel, BLOCK_SIZE=2048, num_warps=8)
    result = flat_out.view(input.shape)
    if out is not None:
        assert out.shape == input.shape and out.dtype == input.dtype
        out.copy_(result)
        return out
    return result
