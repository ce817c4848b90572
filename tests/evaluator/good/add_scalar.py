# task: Math/add
# style: scalar upload (torch.tensor([float(x)], device=...)), strided broadcasting with tensor strides, __main__ self-test
from typing import List, Tuple, Union

import torch
import triton
import triton.language as tl

MAX_DIMS = 4


@triton.jit
def add_bcast_kernel(
    a_ptr, b_ptr, alpha_ptr, out_ptr, n,
    d1, d2, d3,
    sa0, sa1, sa2, sa3,
    sb0, sb1, sb2, sb3,
    B_IS_SCALAR: tl.constexpr, BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    lin = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = lin < n
    # unravel the linear (row-major) output index into 4 coordinates
    i3 = lin % d3
    t = lin // d3
    i2 = t % d2
    t = t // d2
    i1 = t % d1
    i0 = t // d1
    a = tl.load(a_ptr + i0 * sa0 + i1 * sa1 + i2 * sa2 + i3 * sa3, mask=mask, other=0.0).to(tl.float32)
    if B_IS_SCALAR:
        b = tl.load(b_ptr)
    else:
        b = tl.load(b_ptr + i0 * sb0 + i1 * sb1 + i2 * sb2 + i3 * sb3, mask=mask, other=0.0).to(tl.float32)
    alpha = tl.load(alpha_ptr)
    out = a + alpha * b
    tl.store(out_ptr + lin, out.to(out_ptr.dtype.element_ty), mask=mask)


def _pad4(shape: Tuple[int, ...], strides: Tuple[int, ...]) -> Tuple[List[int], List[int]]:
    pad = MAX_DIMS - len(shape)
    return [1] * pad + list(shape), [0] * pad + list(strides)


def add(input: torch.Tensor, other: Union[torch.Tensor, float, int], alpha=1, out=None) -> torch.Tensor:
    device = input.device
    alpha_t = torch.tensor([float(alpha)], device=device, dtype=torch.float32)
    if isinstance(other, torch.Tensor):
        shape = torch.broadcast_shapes(input.shape, other.shape)
        b = other.expand(shape)
        b_is_scalar = False
    else:
        shape = input.shape
        b = torch.tensor([float(other)], device=device, dtype=torch.float32)
        b_is_scalar = True
    a = input.expand(shape)
    if len(shape) > MAX_DIMS:
        # fall back to flat, materialized operands
        a = a.contiguous().view(-1)
        if not b_is_scalar:
            b = b.contiguous().view(-1)
    result = torch.empty(shape, dtype=input.dtype, device=device)
    n = result.numel()
    if n > 0:
        sizes, sa = _pad4(tuple(a.shape), a.stride())
        sb = [0] * MAX_DIMS if b_is_scalar else _pad4(tuple(b.shape), b.stride())[1]
        BLOCK = 1024
        add_bcast_kernel[(triton.cdiv(n, BLOCK),)](
            a, b, alpha_t, result, n,
            sizes[1], sizes[2], sizes[3],
            sa[0], sa[1], sa[2], sa[3],
            sb[0], sb[1], sb[2], sb[3],
            B_IS_SCALAR=b_is_scalar, BLOCK=BLOCK,
        )
    if out is not None:
        out.copy_(result)
        return out
    return result


if __name__ == "__main__":
    torch.manual_seed(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(300, 37, device=dev).t()  # non-contiguous
    y = torch.randn(300, device=dev)
    assert torch.allclose(add(x, y), torch.add(x, y))
    a = torch.randn(16, 1, 40, device=dev, dtype=torch.float16)
    b = torch.randn(1, 30, 40, device=dev, dtype=torch.float16)
    assert torch.allclose(add(a, b, alpha=-0.5), torch.add(a, b, alpha=-0.5), atol=1e-3, rtol=1e-3)
    c = torch.randn(3, 1001, device=dev)
    assert torch.allclose(add(c, 20.0, alpha=2), torch.add(c, 20.0, alpha=2))
    d = torch.randn(2, 1, 17, 5, device=dev)
    e = torch.randn(7, 1, 1, device=dev)
    assert torch.allclose(add(d, e, alpha=3), torch.add(d, e, alpha=3))
    print("add: all checks passed")
