import torch
import triton
import triton.language as tl

BLOCK = 2048


@triton.jit
def rmsprop_kernel(p_ptr, g_ptr, s_ptr, p_out_ptr, s_out_ptr, n, lr, alpha, one_minus_alpha, eps, weight_decay,
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
    tl.store(p_out_ptr + offsets, p.to(p_out_ptr.dtype.element_ty), mask=mask)
    tl.store(s_out_ptr + offsets, s.to(s_out_ptr.dtype.element_ty), mask=mask)


def rmsprop_step(param, grad, square_avg, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0):
    p = param.contiguous()
    g = grad.contiguous()
    s = square_avg.contiguous()
    new_param = torch.empty(param.shape, device=param.device, dtype=param.dtype)
    new_square_avg = torch.empty(square_avg.shape, device=square_avg.device, dtype=square_avg.dtype)
    n = p.numel()
    rmsprop_kernel[(max(1, triton.cdiv(n, BLOCK)),)](p, g, s, new_param, new_square_avg, n, float(lr),
                                                     float(alpha), 1.0 - float(alpha), float(eps), float(weight_decay),
                                                     HAS_DECAY=weight_decay != 0, BLOCK=BLOCK, num_warps=8)
    return new_param, new_square_avg
