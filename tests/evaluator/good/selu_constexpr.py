# task: Activation/selu
# style: module-level tl.constexpr constants, helper @triton.jit function, __main__ self-test
"""SELU activation in Triton.

selu(x) = SCALE * x                      for x > 0
        = SCALE * ALPHA * (exp(x) - 1)   for x <= 0
"""
import torch
import triton
import triton.language as tl

ALPHA = tl.constexpr(1.6732632423543772848170429916717)
SCALE = tl.constexpr(1.0507009873554804934193349852946)
BLOCK_SIZE = 1024


@triton.jit
def _selu_math(x):
    neg = ALPHA * (tl.exp(x) - 1.0)
    return SCALE * tl.where(x > 0.0, x, neg)


@triton.jit
def selu_kernel(in_ptr, out_ptr, numel, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < numel
    x = tl.load(in_ptr + offsets, mask=mask, other=0.0)
    y = _selu_math(x.to(tl.float32))
    tl.store(out_ptr + offsets, y.to(x.dtype), mask=mask)


def selu(input: torch.Tensor, inplace: bool = False) -> torch.Tensor:
    src = input.contiguous()
    numel = src.numel()
    dst = src if (inplace and src is input) else torch.empty_like(src)
    grid = (triton.cdiv(numel, BLOCK_SIZE),)
    selu_kernel[grid](src, dst, numel, BLOCK=BLOCK_SIZE)
    if inplace:
        if dst is not input:
            input.copy_(dst)
        return input
    return dst


if __name__ == "__main__":
    torch.manual_seed(42)
    for shape in [(33, 257), (5, 1, 17), (1024, 1024)]:
        for dtype in (torch.float32, torch.float16, torch.bfloat16):
            a = torch.randn(*shape, dtype=dtype) * 2
            if torch.cuda.is_available():
                a = a.cuda()
            expected = torch.nn.functional.selu(a)
            got = selu(a)
            tol = 1e-5 if dtype == torch.float32 else 2e-2
            ok = torch.allclose(got, expected, atol=tol, rtol=tol)
            print(f"{str(shape):>14} {str(dtype):>15} {'PASS' if ok else 'FAIL'}")
            b = a.clone()
            assert selu(b, inplace=True) is b
            assert torch.allclose(b, expected, atol=tol, rtol=tol)
