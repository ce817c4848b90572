import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def sgd_kernel(p_ptr, g_ptr, buf_ptr, n, lr, momentum, weight_decay, dampening,
               MOMENTUM: tl.constexpr, FIRST: tl.constexpr, NESTEROV: tl.constexpr, MAXIMIZE: tl.constexpr,
               HAS_DECAY: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    p = tl.load(p_ptr + offsets, mask=mask).to(tl.float32)
    g = tl.load(g_ptr + offsets, mask=mask).to(tl.float32)
    if MAXIMIZE:
        g = -g
    if HAS_DECAY:
        g = g + weight_decay * p
    if MOMENTUM:
        if FIRST:
            buf = g
        else:
            buf = momentum * tl.load(buf_ptr + offsets, mask=mask).to(tl.float32) + (1.0 - dampening) * g
        buf_stored = buf.to(buf_ptr.dtype.element_ty)
        tl.store(buf_ptr + offsets, buf_stored, mask=mask)
        if NESTEROV:
            g = g + momentum * buf_stored.to(tl.float32)
        else:
            g = buf_stored.to(tl.float32)
    p = p - lr * g
    tl.store(p_ptr + offsets, p.to(p_ptr.dtype.element_ty), mask=mask)


def SGD(params, grads, momentum_buffers, step, lr=1e-3, momentum=0, weight_decay=0, dampening=0,
        nesterov=False, maximize=False):
    for i, param in enumerate(params):
        state = [param] + ([momentum_buffers[i]] if momentum != 0 else [])
        # the kernel works on flat contiguous storage; non-contiguous state is updated through copies
        work = [t if t.is_contiguous() else t.contiguous() for t in state]
        g = grads[i].contiguous()
        buf = work[1] if momentum != 0 else work[0]
        n = param.numel()
        sgd_kernel[(max(1, triton.cdiv(n, BLOCK)),)](
            work[0], g, buf, n, float(lr), float(momentum), float(weight_decay), float(dampening),
            MOMENTUM=momentum != 0, FIRST=step == 1, NESTEROV=bool(nesterov), MAXIMIZE=bool(maximize),
            HAS_DECAY=weight_decay != 0, BLOCK=BLOCK, num_warps=8)
        for t, w in zip(state, work):
            if w is not t:
                t.copy_(w)
    return None
