# task: Optimizer/Adam
# style: scalar uploads (hyperparameters as torch.tensor([...], device=p.device) read with tl.load), constexpr flags for amsgrad/maximize, masks with other=, one launch per tensor of the list
import math

import torch
import triton
import triton.language as tl


@triton.jit
def adam_step_kernel(p_ptr, g_ptr, m_ptr, v_ptr, vmax_ptr, hyper_ptr, n,
                     AMSGRAD: tl.constexpr, MAXIMIZE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n

    beta1 = tl.load(hyper_ptr + 0)
    beta2 = tl.load(hyper_ptr + 1)
    eps = tl.load(hyper_ptr + 2)
    weight_decay = tl.load(hyper_ptr + 3)
    step_size = tl.load(hyper_ptr + 4)        # lr / (1 - beta1**step)
    inv_sqrt_bc2 = tl.load(hyper_ptr + 5)     # 1 / sqrt(1 - beta2**step)

    p = tl.load(p_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    m = tl.load(m_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    v = tl.load(v_ptr + offs, mask=mask, other=0.0).to(tl.float32)

    if MAXIMIZE:
        g = -g
    g = g + weight_decay * p
    m = beta1 * m + (1.0 - beta1) * g
    v = beta2 * v + (1.0 - beta2) * g * g
    tl.store(m_ptr + offs, m.to(m_ptr.dtype.element_ty), mask=mask)
    tl.store(v_ptr + offs, v.to(v_ptr.dtype.element_ty), mask=mask)

    if AMSGRAD:
        vmax = tl.load(vmax_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        vmax = tl.maximum(vmax, v)
        tl.store(vmax_ptr + offs, vmax.to(vmax_ptr.dtype.element_ty), mask=mask)
        second = vmax
    else:
        second = v

    denom = tl.sqrt(second) * inv_sqrt_bc2 + eps
    p = p - step_size * m / denom
    tl.store(p_ptr + offs, p.to(p_ptr.dtype.element_ty), mask=mask)


def Adam(params, grads, exp_avgs, exp_avg_sqs, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
         weight_decay=0, amsgrad=False, max_exp_avg_sqs=None, maximize=False):
    assert len(params) == len(grads) == len(exp_avgs) == len(exp_avg_sqs), "lists must have equal lengths"
    if amsgrad:
        assert max_exp_avg_sqs is not None and len(max_exp_avg_sqs) == len(params), \
            "amsgrad needs one max_exp_avg_sq per parameter"
    beta1, beta2 = betas
    bias_correction1 = 1.0 - beta1 ** step
    bias_correction2 = 1.0 - beta2 ** step

    BLOCK = 1024
    hyper = None
    for i, p in enumerate(params):
        if hyper is None or hyper.device != p.device:
            hyper = torch.tensor([beta1, beta2, eps, weight_decay, lr / bias_correction1,
                                  1.0 / math.sqrt(bias_correction2)], device=p.device, dtype=torch.float32)
        n = p.numel()
        if n == 0:
            continue
        for t in (p, grads[i], exp_avgs[i], exp_avg_sqs[i]):
            assert t.is_contiguous() and t.numel() == n, "tensors must be contiguous and of equal size"
        vmax = max_exp_avg_sqs[i] if amsgrad else exp_avg_sqs[i]
        adam_step_kernel[(triton.cdiv(n, BLOCK),)](
            p, grads[i], exp_avgs[i], exp_avg_sqs[i], vmax, hyper, n,
            AMSGRAD=bool(amsgrad), MAXIMIZE=bool(maximize), BLOCK=BLOCK,
        )
    return None
