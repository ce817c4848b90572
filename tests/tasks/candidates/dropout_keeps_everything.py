# task: Fusion/fused_hardshrink_dropout
# expect: INCORRECT
# reason: zeroed elements
# Keeps every element (scaled by 1/(1-p) as if kept): the zero fraction is far from p.
import torch
import triton
import triton.language as tl

QUARTER = 1024  # each program handles 4 * QUARTER elements, one Philox call per 4 elements


@triton.jit
def _shrink_store(x_ptr, y_ptr, idx, u, n, p, scale, lambd, TRAINING: tl.constexpr):
    mask = idx < n
    x = tl.load(x_ptr + idx, mask=mask, other=0.0).to(tl.float32)
    if TRAINING:
        v = tl.where(u >= 0.0, x * scale, 0.0)
    else:
        v = x
    y = tl.where(tl.abs(v) > lambd, v, 0.0)
    tl.store(y_ptr + idx, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def hardshrink_dropout_kernel(x_ptr, y_ptr, n, seed, p, scale, lambd,
                              TRAINING: tl.constexpr, QUARTER: tl.constexpr):
    pid = tl.program_id(0)
    lane = tl.arange(0, QUARTER)
    # Philox counter (32-bit: one per 4 elements): unique per (program, lane); its four outputs
    # cover four coalesced quarters of the program's block
    u0, u1, u2, u3 = tl.rand4x(seed, pid * QUARTER + lane)
    base = pid.to(tl.int64) * (4 * QUARTER) + lane
    _shrink_store(x_ptr, y_ptr, base, u0, n, p, scale, lambd, TRAINING)
    _shrink_store(x_ptr, y_ptr, base + QUARTER, u1, n, p, scale, lambd, TRAINING)
    _shrink_store(x_ptr, y_ptr, base + 2 * QUARTER, u2, n, p, scale, lambd, TRAINING)
    _shrink_store(x_ptr, y_ptr, base + 3 * QUARTER, u3, n, p, scale, lambd, TRAINING)


def fused_hardshrink_dropout(input: torch.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False,
                             lambd: float = 0.5):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    x = input.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return y
    use_dropout = bool(training) and p > 0.0
    seed = torch.randint(0, 2**31 - 1, (1,)).item() if use_dropout else 0
    scale = 1.0 / (1.0 - p) if p < 1.0 else 0.0
    grid = (triton.cdiv(n, 4 * QUARTER),)
    hardshrink_dropout_kernel[grid](x, y, n, seed, float(p), float(scale), float(lambd),
                                    TRAINING=use_dropout, QUARTER=QUARTER, num_warps=4)
    return y.view(input.shape)
