# task: Fusion/fused_add_gelu
# style: entry named kernel_function, scalar uploads (torch.tensor([float(alpha)], device=...), torch.full((1,), other)), autotuned (several configs, key), broadcast through stride-0 expand
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 256}, num_warps=2),
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 4096}, num_warps=8),
    ],
    key=["n_elements"],
)
@triton.jit
def add_gelu_kernel(x_ptr, y_ptr, alpha_ptr, out_ptr, n_elements,
                    d1, d2, d3, ys0, ys1, ys2, ys3,
                    TANH: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    live = offs < n_elements

    # `other` may be broadcast: walk its (padded 4-D) strides
    i3 = offs % d3
    r = offs // d3
    i2 = r % d2
    r = r // d2
    i1 = r % d1
    i0 = r // d1
    y_off = i0 * ys0 + i1 * ys1 + i2 * ys2 + i3 * ys3

    x = tl.load(x_ptr + offs, mask=live, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + y_off, mask=live, other=0.0).to(tl.float32)
    alpha = tl.load(alpha_ptr)
    s = x + alpha * y
    if TANH:
        z = 0.7978845608028654 * (s + 0.044715 * s * s * s)
        t = 1.0 - 2.0 / (tl.exp(2.0 * z) + 1.0)
        g = 0.5 * s * (1.0 + t)
    else:
        g = 0.5 * s * (1.0 + tl.erf(s * 0.7071067811865476))
    tl.store(out_ptr + offs, g.to(out_ptr.dtype.element_ty), mask=live)


def kernel_function(input, other, alpha=1, approximate="none", out=None):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    assert input.dim() <= 4, "inputs of up to 4 dims are supported"
    x = input.contiguous()
    dev = x.device

    if isinstance(other, torch.Tensor):
        y = other.expand(x.shape)
    else:
        y = torch.full((1,), float(other), device=dev, dtype=torch.float32).expand(x.shape)
    alpha_t = torch.tensor([float(alpha)], device=dev, dtype=torch.float32)

    pad = 4 - x.dim()
    dims = (1,) * pad + tuple(x.shape)
    ystr = (0,) * pad + tuple(y.stride())

    if out is not None and out.is_contiguous() and out.shape == x.shape:
        result = out
    else:
        result = torch.empty(x.shape, device=dev, dtype=x.dtype)
    n = x.numel()
    if n:
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
        add_gelu_kernel[grid](x, y, alpha_t, result, n, dims[1], dims[2], dims[3], *ystr,
                              TANH=approximate == "tanh")
    if out is not None and result is not out:
        out.copy_(result)
        return out
    return result
