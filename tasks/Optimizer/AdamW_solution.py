import math

import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def adamw_kernel(p_ptr, g_ptr, m_ptr, v_ptr, n, decay, beta1, beta2, one_minus_beta1, one_minus_beta2, step_size,
                 inv_sqrt_bc2, eps, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    p = tl.load(p_ptr + offsets, mask=mask).to(tl.float32)
    g = tl.load(g_ptr + offsets, mask=mask).to(tl.float32)
    m = tl.load(m_ptr + offsets, mask=mask).to(tl.float32)
    v = tl.load(v_ptr + offsets, mask=mask).to(tl.float32)
    # 1 - beta comes from the host in float64: in float32, 1 - 0.999 keeps only three digits
    m = beta1 * m + one_minus_beta1 * g
    v = beta2 * v + one_minus_beta2 * (g * g)
    denom = tl.sqrt(v) * inv_sqrt_bc2 + eps
    p = p * decay - step_size * (m / denom)
    tl.store(p_ptr + offsets, p.to(p_ptr.dtype.element_ty), mask=mask)
    tl.store(m_ptr + offsets, m.to(m_ptr.dtype.element_ty), mask=mask)
    tl.store(v_ptr + offsets, v.to(v_ptr.dtype.element_ty), mask=mask)


def adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
               weight_decay=0.01):
    if step < 1:
        raise ValueError(f"step must be >= 1, got {step}")
    state = (param, exp_avg, exp_avg_sq)
    # The kernel works on flat contiguous storage; non-contiguous state is updated through copies.
    work = [t if t.is_contiguous() else t.contiguous() for t in state]
    g = grad.contiguous()
    n = param.numel()
    decay = 1.0 - lr * weight_decay
    step_size = lr / (1.0 - beta1 ** step)
    inv_sqrt_bc2 = 1.0 / math.sqrt(1.0 - beta2 ** step)
    adamw_kernel[(max(1, triton.cdiv(n, BLOCK)),)](
        work[0], g, work[1], work[2], n, decay, beta1, beta2, 1.0 - beta1, 1.0 - beta2, step_size, inv_sqrt_bc2,
        eps, BLOCK=BLOCK, num_warps=8)
    for t, w in zip(state, work):
        if w is not t:
            t.copy_(w)
    return param, exp_avg, exp_avg_sq
