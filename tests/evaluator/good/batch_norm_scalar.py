# task: Normalization/batch_norm
# style: scalar uploads (torch.full((1,), v, device=...)), Optional type hints, docstrings, two kernels (stats + apply)
"""Batch normalization with Triton.

Kernel 1 (one program per channel) produces a per-channel affine transform
    scale[c] = weight[c] / sqrt(var[c] + eps),  shift[c] = bias[c] - mean[c] * scale[c]
from either the batch statistics (training, two passes for a stable variance; the running
statistics are updated in place) or the running statistics (inference).
Kernel 2 applies y = x * scale[c] + shift[c] to every element.
"""
from typing import Optional

import torch
import triton
import triton.language as tl


@triton.jit
def bn_channel_stats_kernel(
    x_ptr, rmean_ptr, rvar_ptr, w_ptr, b_ptr, eps_ptr, momentum_ptr,
    scale_ptr, shift_ptr,
    C, S, count,
    TRAINING: tl.constexpr, UPDATE_RUNNING: tl.constexpr,
    HAS_WEIGHT: tl.constexpr, HAS_BIAS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    c = tl.program_id(0)
    eps = tl.load(eps_ptr)
    if TRAINING:
        # element j of this channel: n = j // S, s = j % S -> offset n*C*S + c*S + s
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, count, BLOCK):
            j = start + tl.arange(0, BLOCK).to(tl.int64)
            m = j < count
            off = (j // S) * C * S + c * S + (j % S)
            acc += tl.load(x_ptr + off, mask=m, other=0.0).to(tl.float32)
        mean = tl.sum(acc, axis=0) / count
        acc2 = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, count, BLOCK):
            j = start + tl.arange(0, BLOCK).to(tl.int64)
            m = j < count
            off = (j // S) * C * S + c * S + (j % S)
            d = tl.load(x_ptr + off, mask=m, other=0.0).to(tl.float32) - mean
            acc2 += tl.where(m, d * d, 0.0)
        m2 = tl.sum(acc2, axis=0)
        var = m2 / count
        if UPDATE_RUNNING:
            momentum = tl.load(momentum_ptr)
            unbiased = m2 / (count - 1)
            rm = tl.load(rmean_ptr + c)
            rv = tl.load(rvar_ptr + c)
            tl.store(rmean_ptr + c, (1.0 - momentum) * rm + momentum * mean)
            tl.store(rvar_ptr + c, (1.0 - momentum) * rv + momentum * unbiased)
    else:
        mean = tl.load(rmean_ptr + c).to(tl.float32)
        var = tl.load(rvar_ptr + c).to(tl.float32)
    inv_std = 1.0 / tl.sqrt(var + eps)
    if HAS_WEIGHT:
        scale = tl.load(w_ptr + c).to(tl.float32) * inv_std
    else:
        scale = inv_std
    if HAS_BIAS:
        shift = tl.load(b_ptr + c).to(tl.float32) - mean * scale
    else:
        shift = -mean * scale
    tl.store(scale_ptr + c, scale)
    tl.store(shift_ptr + c, shift)


@triton.jit
def bn_apply_kernel(x_ptr, y_ptr, scale_ptr, shift_ptr, total, C, S, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < total
    ch = (offs // S) % C
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    a = tl.load(scale_ptr + ch, mask=m, other=0.0)
    b = tl.load(shift_ptr + ch, mask=m, other=0.0)
    tl.store(y_ptr + offs, (x * a + b).to(y_ptr.dtype.element_ty), mask=m)


def batch_norm(
    input: torch.Tensor,
    running_mean: Optional[torch.Tensor],
    running_var: Optional[torch.Tensor],
    weight: Optional[torch.Tensor] = None,
    bias: Optional[torch.Tensor] = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> torch.Tensor:
    """Same semantics as torch.nn.functional.batch_norm (running stats updated in place)."""
    assert input.dim() >= 2, "batch_norm expects (N, C, ...) input"
    if not training:
        assert running_mean is not None and running_var is not None
    x = input.contiguous()
    N, C = x.shape[0], x.shape[1]
    S = x.numel() // max(N * C, 1)
    count = N * S
    if training:
        assert count > 1, "Expected more than 1 value per channel when training"
    dev = x.device

    eps_t = torch.full((1,), eps, device=dev, dtype=torch.float32)
    momentum_t = torch.full((1,), momentum, device=dev, dtype=torch.float32)
    scale = torch.empty(C, device=dev, dtype=torch.float32)
    shift = torch.empty(C, device=dev, dtype=torch.float32)
    update = training and running_mean is not None and running_var is not None
    dummy = scale  # stands in for absent optional tensors; never read

    bn_channel_stats_kernel[(C,)](
        x,
        running_mean if running_mean is not None else dummy,
        running_var if running_var is not None else dummy,
        weight if weight is not None else dummy,
        bias if bias is not None else dummy,
        eps_t, momentum_t, scale, shift,
        C, S, count,
        TRAINING=training, UPDATE_RUNNING=update,
        HAS_WEIGHT=weight is not None, HAS_BIAS=bias is not None,
        BLOCK=1024, num_warps=4,
    )
    y = torch.empty_like(x)
    total = x.numel()
    BLOCK = 1024
    bn_apply_kernel[(triton.cdiv(total, BLOCK),)](x, y, scale, shift, total, C, S, BLOCK=BLOCK)
    return y
