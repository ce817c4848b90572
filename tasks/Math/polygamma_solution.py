import math

import torch
import triton
import triton.language as tl

# Terms summed directly before the asymptotic expansion takes over at a = x + SHIFT.
SHIFT = tl.constexpr(9)
# Bernoulli numbers B2, B4, ..., B12 divided by (2j)!.
B2 = tl.constexpr(1.0 / 6.0 / 2.0)
B4 = tl.constexpr(-1.0 / 30.0 / 24.0)
B6 = tl.constexpr(1.0 / 42.0 / 720.0)
B8 = tl.constexpr(-1.0 / 30.0 / 40320.0)
B10 = tl.constexpr(5.0 / 66.0 / 3628800.0)
B12 = tl.constexpr(-691.0 / 2730.0 / 479001600.0)


@triton.jit
def _digamma(x):
    # psi(x) = psi(x + 6) - sum_{k<6} 1/(x+k); psi(a) ~ ln a - 1/(2a) - sum_j B2j / (2j a^2j) for a >= 6
    acc = tl.zeros_like(x)
    for k in tl.static_range(6):
        acc += 1.0 / (x + k)
    a = x + 6.0
    inv = 1.0 / a
    inv2 = inv * inv
    series = inv2 * (1.0 / 12.0 - inv2 * (1.0 / 120.0 - inv2 * (1.0 / 252.0 - inv2 * (1.0 / 240.0))))
    return tl.log(a) - 0.5 * inv - series - acc


@triton.jit
def _ipow(base, S: tl.constexpr):
    p = base
    for _ in tl.static_range(S - 1):
        p = p * base
    return p


@triton.jit
def _hurwitz_int(x, S: tl.constexpr):
    # zeta(S, x) = sum_{k>=0} (x+k)^-S for an integer S >= 2, x > 0, by Euler-Maclaurin:
    # SHIFT terms, then a^(1-S)/(S-1) + a^-S/2 + sum_j B2j/(2j)! (S)_(2j-1) a^(-S-2j+1), a = x + SHIFT
    acc = tl.zeros_like(x)
    for k in tl.static_range(SHIFT):
        acc += _ipow(1.0 / (x + k), S)
    a = x + SHIFT
    inv = 1.0 / a
    inv2 = inv * inv
    ap = _ipow(inv, S)
    tail = ap * a / (S - 1) + 0.5 * ap
    t = ap * inv
    poch = S * 1.0
    tail += B2 * poch * t
    t = t * inv2
    poch = poch * (S + 1) * (S + 2)
    tail += B4 * poch * t
    t = t * inv2
    poch = poch * (S + 3) * (S + 4)
    tail += B6 * poch * t
    t = t * inv2
    poch = poch * (S + 5) * (S + 6)
    tail += B8 * poch * t
    t = t * inv2
    poch = poch * (S + 7) * (S + 8)
    tail += B10 * poch * t
    t = t * inv2
    poch = poch * (S + 9) * (S + 10)
    tail += B12 * poch * t
    return acc + tail


@triton.jit
def polygamma_kernel(x_ptr, y_ptr, numel, factor, N: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < numel
    x = tl.load(x_ptr + offsets, mask=mask, other=1.0).to(tl.float32)
    if N == 0:
        y = _digamma(x)
    else:
        y = factor * _hurwitz_int(x, N + 1)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def polygamma(n, input, *, out=None):
    n = int(n)
    if n < 0:
        raise ValueError("polygamma is defined for n >= 0")
    x = input.contiguous()
    y = torch.empty_like(x)
    numel = x.numel()
    # (-1)^(n+1) n!
    factor = float(math.factorial(n)) * (1.0 if n % 2 == 1 else -1.0)
    block = 1024
    polygamma_kernel[(triton.cdiv(numel, block),)](x, y, numel, factor, N=n, BLOCK=block)
    if out is not None:
        out.copy_(y)
        return out
    return y
