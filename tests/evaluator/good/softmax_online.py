# task: Math/softmax
# style: online (single-read statistics) softmax over any dim via strides, triton.next_power_of_2, __main__ self-test
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_online_kernel(
    x_ptr, y_ptr,
    L, INNER,
    BLOCK_L: tl.constexpr,
):
    """One program per slice. A slice has L elements spaced INNER apart, starting at
    outer * L * INNER + inner for program id = outer * INNER + inner."""
    row = tl.program_id(0).to(tl.int64)
    outer = row // INNER
    inner = row % INNER
    base = outer * L * INNER + inner
    cols = tl.arange(0, BLOCK_L)

    # pass 1: running max m and running sum s of exp(x - m)
    m = tl.full([BLOCK_L], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK_L], dtype=tl.float32)
    for start in range(0, L, BLOCK_L):
        idx = start + cols
        mask = idx < L
        x = tl.load(x_ptr + base + idx.to(tl.int64) * INNER, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # lanes that have only seen -inf keep s == 0 (avoid inf - inf)
        alpha = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        p = tl.where(m_new == float("-inf"), 0.0, tl.exp(x - m_new))
        s = s * alpha + p
        m = m_new
    row_max = tl.max(m, axis=0)
    scale = tl.where(m == float("-inf"), 0.0, tl.exp(m - row_max))
    row_sum = tl.sum(s * scale, axis=0)
    inv = 1.0 / row_sum

    # pass 2: normalize and write
    for start in range(0, L, BLOCK_L):
        idx = start + cols
        mask = idx < L
        off = base + idx.to(tl.int64) * INNER
        x = tl.load(x_ptr + off, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - row_max) * inv
        tl.store(y_ptr + off, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax(input, dim, dtype=None):
    x = input.contiguous()
    ndim = x.dim()
    if ndim == 0:
        x = x.view(1)
    d = dim % max(ndim, 1)
    shape = x.shape
    L = shape[d]
    inner = 1
    for s in shape[d + 1:]:
        inner *= s
    outer = 1
    for s in shape[:d]:
        outer *= s
    out_dtype = dtype if dtype is not None else input.dtype
    y = torch.empty(shape, dtype=out_dtype, device=x.device)
    if y.numel() == 0:
        return y.view(input.shape)
    BLOCK_L = min(triton.next_power_of_2(L), 2048)
    num_warps = 4 if BLOCK_L <= 1024 else 8
    softmax_online_kernel[(outer * inner,)](x, y, L, inner, BLOCK_L=BLOCK_L, num_warps=num_warps)
    return y.view(input.shape)


if __name__ == "__main__":
    torch.manual_seed(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    cases = [((37, 300), -1), ((16, 50, 24), 1), ((3, 9001), 1), ((5, 2999, 3), -2)]
    for shape, dim in cases:
        x = torch.randn(shape, device=dev) * 2
        x.view(-1)[0] = 100.0  # an outlier
        ref = torch.softmax(x, dim)
        got = softmax(x, dim)
        print(shape, dim, "max err:", (got - ref).abs().max().item())
        assert torch.allclose(got, ref, atol=1e-6, rtol=1e-4)
    xh = torch.randn(37, 300, device=dev, dtype=torch.float16)
    got = softmax(xh, -1, dtype=torch.float32)
    assert got.dtype == torch.float32
    assert torch.allclose(got, torch.softmax(xh, -1, dtype=torch.float32), atol=1e-6, rtol=1e-4)
    print("ok")
