# task: Optimizer/RMSProp
# style: entry named after the task file (RMSProp) as KernelBench-X also accepts, in-place stores, 2-D grid over rows,
#        1 - alpha taken on the host (in float32, 1 - 0.999 keeps only four digits)
import torch
import triton
import triton.language as tl


@triton.jit
def rmsprop_rows(p_ptr, g_ptr, s_ptr, n_cols, lr, alpha, one_minus_alpha, eps, weight_decay, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    offs = row * n_cols + cols
    p = tl.load(p_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.load(s_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    g = g + weight_decay * p
    s = alpha * s + one_minus_alpha * g * g
    p = p - lr * g / (tl.sqrt(s) + eps)
    tl.store(s_ptr + offs, s.to(s_ptr.dtype.element_ty), mask=mask)
    tl.store(p_ptr + offs, p.to(p_ptr.dtype.element_ty), mask=mask)


def RMSProp(param, grad, square_avg, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0):
    n_cols = param.shape[-1] if param.dim() > 0 else 1
    rows = param.numel() // max(n_cols, 1)
    p = param.contiguous()
    s = square_avg.contiguous()
    g = grad.contiguous()
    if param.numel() > 0:
        BLOCK = 128
        rmsprop_rows[(rows, triton.cdiv(n_cols, BLOCK))](p, g, s, n_cols, float(lr), float(alpha), 1.0 - float(alpha),
                                                          float(eps), float(weight_decay), BLOCK=BLOCK)
    if p.data_ptr() != param.data_ptr():
        param.copy_(p)
    if s.data_ptr() != square_avg.data_ptr():
        square_avg.copy_(s)
    return param, square_avg
