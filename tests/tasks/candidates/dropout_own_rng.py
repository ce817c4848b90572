# task: Fusion/fused_hardshrink_dropout
# expect: CORRECT
# reason: passed
# A correct dropout with its own random numbers (one tl.rand per element, a seed from the host
# torch.randint): nothing like torch's RNG stream, and it passes the statistical contract.
import torch
import triton
import triton.language as tl


@triton.jit
def dropout_hardshrink(x_ptr, y_ptr, n, seed, p, scale, lambd, TRAINING: tl.constexpr, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    x = tl.load(x_ptr + idx, mask=mask, other=0.0).to(tl.float32)
    if TRAINING:
        keep = tl.rand(seed, idx.to(tl.int32)) >= p
        x = tl.where(keep, x * scale, 0.0)
    y = tl.where(tl.abs(x) > lambd, x, 0.0)
    tl.store(y_ptr + idx, y.to(y_ptr.dtype.element_ty), mask=mask)


def fused_hardshrink_dropout(input, p=0.5, training=True, inplace=False, lambd=0.5):
    x = input.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        return y
    training = bool(training) and p > 0.0
    seed = torch.randint(0, 2**31 - 1, (1,)).item() if training else 0
    scale = 1.0 / (1.0 - p) if p < 1.0 else 0.0
    dropout_hardshrink[(triton.cdiv(n, 1024),)](x, y, n, seed, float(p), float(scale), float(lambd),
                                                TRAINING=training, BLOCK=1024)
    return y.view(input.shape)
