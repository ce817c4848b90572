# task: Optimizer/Lion
# style: entry named kernel_function, typing hints, in-place stores, masks with other=, __main__ self-test
from typing import Tuple

import torch
import triton
import triton.language as tl


@triton.jit
def _lion_kernel(param_ptr, grad_ptr, avg_ptr, numel, lr, beta1, beta2, decay, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < numel

    p = tl.load(param_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(grad_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    m = tl.load(avg_ptr + offsets, mask=mask, other=0.0).to(tl.float32)

    u = m * beta1 + g * (1.0 - beta1)
    sign = tl.where(u > 0, 1.0, tl.where(u < 0, -1.0, 0.0))
    new_p = p * (1.0 - lr * decay) - lr * sign
    new_m = m * beta2 + g * (1.0 - beta2)

    tl.store(param_ptr + offsets, new_p.to(param_ptr.dtype.element_ty), mask=mask)
    tl.store(avg_ptr + offsets, new_m.to(avg_ptr.dtype.element_ty), mask=mask)


def kernel_function(param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor,
                    lr: float = 1e-4, beta1: float = 0.9, beta2: float = 0.99,
                    weight_decay: float = 0.0) -> Tuple[torch.Tensor, torch.Tensor]:
    if not (param.shape == grad.shape == exp_avg.shape):
        raise ValueError(f"shape mismatch: {param.shape}, {grad.shape}, {exp_avg.shape}")
    if not (param.dtype == grad.dtype == exp_avg.dtype):
        raise TypeError("param, grad and exp_avg must share a dtype")
    p = param if param.is_contiguous() else param.contiguous()
    m = exp_avg if exp_avg.is_contiguous() else exp_avg.contiguous()
    g = grad.contiguous()
    numel = p.numel()
    if numel > 0:
        BLOCK_SIZE = 2048
        grid = (triton.cdiv(numel, BLOCK_SIZE),)
        _lion_kernel[grid](p, g, m, numel, float(lr), float(beta1), float(beta2), float(weight_decay),
                           BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
    if p is not param:
        param.copy_(p)
    if m is not exp_avg:
        exp_avg.copy_(m)
    return param, exp_avg


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for dtype in (torch.float32, torch.float16):
        param = torch.randn(48, 130, device=device, dtype=dtype)
        grad = torch.randn_like(param) * 0.5
        exp_avg = torch.randn_like(param) * 0.2
        lr, b1, b2, wd = 3e-4, 0.95, 0.98, 0.1
        upd = exp_avg.float() * b1 + grad.float() * (1 - b1)
        ref_p = param.float() * (1 - lr * wd) - lr * torch.sign(upd)
        ref_m = exp_avg.float() * b2 + grad.float() * (1 - b2)
        out_p, out_m = kernel_function(param, grad, exp_avg, lr, b1, b2, wd)
        assert out_p is param and out_m is exp_avg
        print(dtype, "param err", (param.float() - ref_p).abs().max().item(),
              "exp_avg err", (exp_avg.float() - ref_m).abs().max().item())
