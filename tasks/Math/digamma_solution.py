import torch
import triton
import triton.language as tl

PI = tl.constexpr(3.141592653589793)


@triton.jit
def _digamma_positive(x):
    # x > 0: psi(x) = psi(x + k) - sum_{j<k} 1 / (x + j), shifting up to y >= 6, then the asymptotic
    # series psi(y) = ln y - 1/(2y) - sum B_2k / (2k y^2k) (five terms: below 1e-10 from y = 6 on)
    acc = tl.zeros_like(x)
    y = x
    for _ in tl.static_range(6):
        low = y < 6.0
        acc -= tl.where(low, 1.0 / y, 0.0)
        y = tl.where(low, y + 1.0, y)
    w = 1.0 / y
    z = w * w
    series = z * (0.083333333333333333 - z * (0.0083333333333333333 - z * (0.0039682539682539683
                                                                           - z * (0.0041666666666666667
                                                                                  - z * 0.0075757575757575758))))
    return (tl.log(y) - 0.5 * w - series) + acc


@triton.jit
def digamma_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    neg = x < 0.0
    psi = _digamma_positive(tl.where(neg, 1.0 - x, x))
    # reflection: psi(x) = psi(1 - x) - pi cot(pi x), with the cotangent taken at the exact distance
    # r = x - round(x) in [-1/2, 1/2] (cot has period pi)
    r = x - tl.floor(x + 0.5)
    cot = tl.cos(r * PI) / tl.sin(r * PI)
    psi = tl.where(neg, psi - PI * cot, psi)
    psi = tl.where(neg & (r == 0.0), float("nan"), psi)
    # +0 -> -inf, -0 -> +inf (1/x carries the zero's sign)
    psi = tl.where(x == 0.0, -1.0 / x, psi)
    tl.store(y_ptr + offsets, psi.to(y_ptr.dtype.element_ty), mask=mask)


def digamma(input_tensor):
    x = input_tensor.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    block = 1024
    digamma_kernel[(max(1, triton.cdiv(n, block)),)](x, y, n, BLOCK=block, num_warps=4)
    return y
