import math

import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def adam_kernel(p_ptr, g_ptr, m_ptr, v_ptr, vmax_ptr, n, beta1, beta2, one_minus_beta1, one_minus_beta2, weight_decay,
                step_size, inv_sqrt_bc2, eps, AMSGRAD: tl.constexpr, MAXIMIZE: tl.constexpr, HAS_DECAY: tl.constexpr,
                BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    p = tl.load(p_ptr + offsets, mask=mask).to(tl.float32)
    g = tl.load(g_ptr + offsets, mask=mask).to(tl.float32)
    m = tl.load(m_ptr + offsets, mask=mask).to(tl.float32)
    v = tl.load(v_ptr + offsets, mask=mask).to(tl.float32)
    if MAXIMIZE:
        g = -g
    if HAS_DECAY:
        g = g + weight_decay * p
    # 1 - beta comes from the host in float64: in float32, 1 - 0.999 keeps only three digits
    m = beta1 * m + one_minus_beta1 * g
    v = beta2 * v + one_minus_beta2 * (g * g)
    v_out = v.to(v_ptr.dtype.element_ty)
    if AMSGRAD:
        vmax = tl.load(vmax_ptr + offsets, mask=mask).to(tl.float32)
        vmax = tl.maximum(vmax, v_out.to(tl.float32))
        tl.store(vmax_ptr + offsets, vmax.to(vmax_ptr.dtype.element_ty), mask=mask)
        second = vmax
    else:
        second = v
    p = p - step_size * (m / (tl.sqrt(second) * inv_sqrt_bc2 + eps))
    tl.store(p_ptr + offsets, p.to(p_ptr.dtype.element_ty), mask=mask)
    tl.store(m_ptr + offsets, m.to(m_ptr.dtype.element_ty), mask=mask)
    tl.store(v_ptr + offsets, v_out, mask=mask)


def Adam(params, grads, exp_avgs, exp_avg_sqs, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
         amsgrad=False, max_exp_avg_sqs=None, maximize=False):
    if step < 1:
        raise ValueError(f"step must be >= 1, got {step}")
    beta1, beta2 = float(betas[0]), float(betas[1])
    step_size = lr / (1.0 - beta1 ** step)
    inv_sqrt_bc2 = 1.0 / math.sqrt(1.0 - beta2 ** step)
    for i, param in enumerate(params):
        state = [param, exp_avgs[i], exp_avg_sqs[i]] + ([max_exp_avg_sqs[i]] if amsgrad else [])
        # the kernel works on flat contiguous storage; non-contiguous state is updated through copies
        work = [t if t.is_contiguous() else t.contiguous() for t in state]
        g = grads[i].contiguous()
        vmax = work[3] if amsgrad else work[2]
        n = param.numel()
        adam_kernel[(max(1, triton.cdiv(n, BLOCK)),)](
            work[0], g, work[1], work[2], vmax, n, beta1, beta2, 1.0 - beta1, 1.0 - beta2, float(weight_decay),
            float(step_size), inv_sqrt_bc2, float(eps), AMSGRAD=bool(amsgrad), MAXIMIZE=bool(maximize),
            HAS_DECAY=weight_decay != 0, BLOCK=BLOCK, num_warps=8)
        for t, w in zip(state, work):
            if w is not t:
                t.copy_(w)
    return None
