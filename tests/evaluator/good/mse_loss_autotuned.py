# task: Loss/mse_loss
# style: autotuned (several configs, key), deterministic two-stage reduction (persistent grid-stride + final kernel), __main__ self-test
import torch
import triton
import triton.language as tl

_CONFIGS = [
    triton.Config({"BLOCK_SIZE": 512}, num_warps=4),
    triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
    triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),
    triton.Config({"BLOCK_SIZE": 4096}, num_warps=8),
]


@triton.autotune(configs=_CONFIGS, key=["n_elements"])
@triton.jit
def mse_elementwise_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    d = x - y
    tl.store(out_ptr + offs, (d * d).to(out_ptr.dtype.element_ty), mask=mask)


@triton.autotune(configs=_CONFIGS, key=["n_elements"])
@triton.jit
def mse_partial_sum_kernel(x_ptr, y_ptr, partial_ptr, n_elements, num_programs, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    step = num_programs * BLOCK_SIZE  # num_programs may be specialized to a constexpr 1
    for start in range(pid.to(tl.int64) * BLOCK_SIZE, n_elements, step):
        offs = start + tl.arange(0, BLOCK_SIZE)
        mask = offs < n_elements
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        d = x - y
        acc += d * d
    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def mse_finalize_kernel(partial_ptr, out_ptr, num_partials, divisor, BLOCK_P: tl.constexpr):
    offs = tl.arange(0, BLOCK_P)
    p = tl.load(partial_ptr + offs, mask=offs < num_partials, other=0.0)
    total = tl.sum(p, axis=0) / divisor
    tl.store(out_ptr, total.to(out_ptr.dtype.element_ty))


def mse_loss(input, target, reduction="mean"):
    assert input.shape == target.shape, "input and target must have the same shape"
    if reduction not in ("none", "sum", "mean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    x = input.contiguous()
    y = target.contiguous()
    n = x.numel()

    if reduction == "none":
        out = torch.empty_like(x)
        if n:
            mse_elementwise_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n)
        return out

    num_programs = max(1, min(triton.cdiv(n, 4096), 1024))
    partials = torch.empty(num_programs, dtype=torch.float32, device=x.device)
    mse_partial_sum_kernel[(num_programs,)](x, y, partials, n, num_programs)
    out = torch.empty((), dtype=x.dtype, device=x.device)
    divisor = float(n) if reduction == "mean" else 1.0
    mse_finalize_kernel[(1,)](partials, out, num_programs, divisor,
                              BLOCK_P=triton.next_power_of_2(num_programs))
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for shape, red in [((64, 100), "mean"), ((12, 7, 50), "sum"), ((1001,), "none"), ((4096, 4096), "mean")]:
        for dtype in (torch.float32, torch.float16):
            a = torch.randn(shape, device=device, dtype=dtype)
            b = torch.randn(shape, device=device, dtype=dtype) * 0.5 + 0.25
            exp = torch.nn.functional.mse_loss(a.float(), b.float(), reduction=red).to(dtype)
            got = mse_loss(a, b, reduction=red)
            assert got.shape == exp.shape and got.dtype == exp.dtype
            assert torch.allclose(got, exp, rtol=1e-3, atol=1e-3), (shape, red, dtype)
    print("mse_loss OK")
