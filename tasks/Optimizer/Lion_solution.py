import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def lion_kernel(p_ptr, g_ptr, m_ptr, n, lr, beta1, beta2, one_minus_beta1, one_minus_beta2, decay,
                BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    p = tl.load(p_ptr + offsets, mask=mask).to(tl.float32)
    g = tl.load(g_ptr + offsets, mask=mask).to(tl.float32)
    m = tl.load(m_ptr + offsets, mask=mask).to(tl.float32)
    # 1 - beta comes from the host in float64 (in float32 it would lose digits)
    u = beta1 * m + one_minus_beta1 * g
    sign = tl.where(u > 0, 1.0, tl.where(u < 0, -1.0, 0.0))
    p = p * decay - lr * sign
    m = beta2 * m + one_minus_beta2 * g
    tl.store(p_ptr + offsets, p.to(p_ptr.dtype.element_ty), mask=mask)
    tl.store(m_ptr + offsets, m.to(m_ptr.dtype.element_ty), mask=mask)


def lion_step(param, grad, exp_avg, lr=1e-4, beta1=0.9, beta2=0.99, weight_decay=0.0):
    state = (param, exp_avg)
    # The kernel works on flat contiguous storage; non-contiguous state is updated through copies.
    work = [t if t.is_contiguous() else t.contiguous() for t in state]
    g = grad.contiguous()
    n = param.numel()
    lion_kernel[(max(1, triton.cdiv(n, BLOCK)),)](work[0], g, work[1], n, float(lr), float(beta1), float(beta2),
                                                  1.0 - float(beta1), 1.0 - float(beta2),
                                                  1.0 - float(lr) * float(weight_decay), BLOCK=BLOCK, num_warps=8)
    for t, w in zip(state, work):
        if w is not t:
            t.copy_(w)
    return param, exp_avg
