import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def sgd_kernel(p_ptr, g_ptr, buf_ptr, n, lr, momentum, weight_decay, one_minus_dampening,
               MOMENTUM: tl.constexpr, FRESH_BUFFER: tl.constexpr, NESTEROV: tl.constexpr,
               HAS_DECAY: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    p = tl.load(p_ptr + offsets, mask=mask).to(tl.float32)
    g = tl.load(g_ptr + offsets, mask=mask).to(tl.float32)
    if HAS_DECAY:
        g = g + weight_decay * p
    if MOMENTUM:
        if FRESH_BUFFER:
            # the buffer starts at zero, so momentum * buf drops out and its memory is never read
            buf = one_minus_dampening * g
        else:
            buf = momentum * tl.load(buf_ptr + offsets, mask=mask).to(tl.float32) + one_minus_dampening * g
        tl.store(buf_ptr + offsets, buf.to(buf_ptr.dtype.element_ty), mask=mask)
        if NESTEROV:
            g = g + momentum * buf
        else:
            g = buf
    p = p - lr * g
    tl.store(p_ptr + offsets, p.to(p_ptr.dtype.element_ty), mask=mask)


def sgd_step(param, grad, momentum_buffer=None, lr=0.1, momentum=0.9, weight_decay=0.0, dampening=0.0,
             nesterov=False):
    uses_momentum = momentum > 0
    fresh_buffer = uses_momentum and momentum_buffer is None
    if fresh_buffer:
        momentum_buffer = torch.empty(grad.shape, dtype=grad.dtype, device=grad.device)
    state = (param, momentum_buffer) if uses_momentum else (param,)
    # The kernel works on flat contiguous storage; non-contiguous state is updated through copies.
    work = [t if t.is_contiguous() else t.contiguous() for t in state]
    g = grad.contiguous()
    n = param.numel()
    sgd_kernel[(max(1, triton.cdiv(n, BLOCK)),)](
        work[0], g, work[-1], n, float(lr), float(momentum), float(weight_decay), 1.0 - float(dampening),
        MOMENTUM=uses_momentum, FRESH_BUFFER=fresh_buffer, NESTEROV=bool(nesterov), HAS_DECAY=weight_decay != 0,
        BLOCK=BLOCK, num_warps=8)
    for t, w in zip(state, work):
        if w is not t:
            t.copy_(w)
    return (param, momentum_buffer) if uses_momentum else param
