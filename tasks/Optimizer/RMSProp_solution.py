import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def rmsprop_kernel(p_ptr, g_ptr, s_ptr, n, lr, alpha, one_minus_alpha, eps, weight_decay,
                   HAS_DECAY: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    p = tl.load(p_ptr + offsets, mask=mask).to(tl.float32)
    g = tl.load(g_ptr + offsets, mask=mask).to(tl.float32)
    s = tl.load(s_ptr + offsets, mask=mask).to(tl.float32)
    if HAS_DECAY:
        g = g + weight_decay * p
    # 1 - alpha comes from the host in float64: in float32, 1 - 0.999 keeps only three digits
    s = alpha * s + one_minus_alpha * (g * g)
    p = p - lr * g / (tl.sqrt(s) + eps)
    tl.store(p_ptr + offsets, p.to(p_ptr.dtype.element_ty), mask=mask)
    tl.store(s_ptr + offsets, s.to(s_ptr.dtype.element_ty), mask=mask)


def rmsprop_step(param, grad, square_avg, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0):
    state = (param, square_avg)
    # The kernel works on flat contiguous storage; non-contiguous state is updated through copies.
    work = [t if t.is_contiguous() else t.contiguous() for t in state]
    g = grad.contiguous()
    n = param.numel()
    rmsprop_kernel[(max(1, triton.cdiv(n, BLOCK)),)](work[0], g, work[1], n, float(lr), float(alpha),
                                                     1.0 - float(alpha), float(eps), float(weight_decay),
                                                     HAS_DECAY=weight_decay != 0, BLOCK=BLOCK, num_warps=8)
    for t, w in zip(state, work):
        if w is not t:
            t.copy_(w)
    return param, square_avg
