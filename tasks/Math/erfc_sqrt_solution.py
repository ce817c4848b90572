import torch
import triton
import triton.language as tl


@triton.jit
def erfc_sqrt_kernel(x_ptr, erfc_ptr, sqrt_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    z = tl.abs(x)
    # erfc(z) = t exp(-z^2 + R(t)), t = 1 / (1 + z/2), with a Chebyshev-fitted R (relative error ~1e-7).
    t = 1.0 / (1.0 + 0.5 * z)
    r = 0.17087277
    r = r * t - 0.82215223
    r = r * t + 1.48851587
    r = r * t - 1.13520398
    r = r * t + 0.27886807
    r = r * t - 0.18628806
    r = r * t + 0.09678418
    r = r * t + 0.37409196
    r = r * t + 1.00002368
    r = r * t - 1.26551223
    # exp(-z^2) split as exp(-m^2) exp(-(z - m)(z + m)) with m = z rounded to 1/64, so that m^2 is
    # exact and z^2 loses no bits for large z
    m = tl.floor(z * 64.0 + 0.5) * 0.015625
    f = z - m
    e = t * tl.exp(-m * m) * tl.exp(r - f * (z + m))
    e = tl.where(z >= 30.0, 0.0, e)  # NaN stays NaN
    erfc = tl.where(x < 0, 2.0 - e, e)
    tl.store(erfc_ptr + offsets, erfc.to(erfc_ptr.dtype.element_ty), mask=mask)
    tl.store(sqrt_ptr + offsets, tl.sqrt_rn(x).to(sqrt_ptr.dtype.element_ty), mask=mask)


def erfc_sqrt(input: torch.Tensor):
    x = input.contiguous()
    erfc = torch.empty_like(x)
    root = torch.empty_like(x)
    n = x.numel()
    block = 2048
    erfc_sqrt_kernel[(max(1, triton.cdiv(n, block)),)](x, erfc, root, n, BLOCK=block, num_warps=8)
    return erfc, root
