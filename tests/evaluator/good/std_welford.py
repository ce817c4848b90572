# task: Reduce/std
# style: split-row partial statistics merged with Chan's parallel formula, scalar upload (torch.tensor([float(correction)])), __main__ self-test
import torch
import triton
import triton.language as tl


@triton.jit
def std_partial_kernel(x_ptr, cnt_ptr, mean_ptr, m2_ptr, K, CHUNK, S, BLOCK: tl.constexpr):
    """Program (row, s) covers x[row, s*CHUNK : (s+1)*CHUNK] with a two-pass mean / M2."""
    row = tl.program_id(0).to(tl.int64)
    s = tl.program_id(1)
    lo = s * CHUNK
    hi = tl.minimum(lo + CHUNK, K)
    row_ptr = x_ptr + row * K
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(lo, hi, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        acc += tl.load(row_ptr + idx, mask=idx < hi, other=0.0).to(tl.float32)
    n = tl.maximum(hi - lo, 0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / tl.maximum(n, 1.0)
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(lo, hi, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        m = idx < hi
        d = tl.load(row_ptr + idx, mask=m, other=0.0).to(tl.float32) - mean
        acc2 += tl.where(m, d * d, 0.0)
    out = row * S + s
    tl.store(cnt_ptr + out, n)
    tl.store(mean_ptr + out, mean)
    tl.store(m2_ptr + out, tl.sum(acc2, axis=0))


@triton.jit
def std_combine_kernel(cnt_ptr, mean_ptr, m2_ptr, corr_ptr, y_ptr, S, BLOCK_S: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_S)
    m = offs < S
    n_i = tl.load(cnt_ptr + row * S + offs, mask=m, other=0.0)
    mean_i = tl.load(mean_ptr + row * S + offs, mask=m, other=0.0)
    m2_i = tl.load(m2_ptr + row * S + offs, mask=m, other=0.0)
    n = tl.sum(n_i, axis=0)
    mean = tl.sum(n_i * mean_i, axis=0) / n
    delta = mean_i - mean
    m2 = tl.sum(m2_i + n_i * delta * delta, axis=0)
    corr = tl.load(corr_ptr)
    var = m2 / tl.maximum(n - corr, 0.0)
    tl.store(y_ptr + row, tl.sqrt(var).to(y_ptr.dtype.element_ty))


def std(input, dim=None, correction=1, keepdim=False, out=None):
    nd = input.dim()
    if dim is None:
        red = list(range(nd))
    else:
        red = sorted({d % nd for d in ((dim,) if isinstance(dim, int) else dim)})
    kept = [d for d in range(nd) if d not in red]
    x = input.permute(kept + red).contiguous()
    M = 1
    for d in kept:
        M *= input.shape[d]
    K = x.numel() // max(M, 1)
    if keepdim:
        out_shape = [1 if d in red else input.shape[d] for d in range(nd)]
    else:
        out_shape = [input.shape[d] for d in kept]
    y = torch.empty(out_shape, dtype=input.dtype, device=input.device)
    if M == 0:
        return y

    BLOCK = 1024
    S = max(1, min(triton.cdiv(K, 4 * BLOCK), 1024))
    CHUNK = triton.cdiv(triton.cdiv(K, S), BLOCK) * BLOCK
    S = max(1, triton.cdiv(K, CHUNK))
    cnt = torch.empty((M, S), dtype=torch.float32, device=x.device)
    mean = torch.empty_like(cnt)
    m2 = torch.empty_like(cnt)
    corr = torch.tensor([float(correction)], dtype=torch.float32, device=x.device)
    std_partial_kernel[(M, S)](x, cnt, mean, m2, K, CHUNK, S, BLOCK=BLOCK, num_warps=4)
    std_combine_kernel[(M,)](cnt, mean, m2, corr, y, S, BLOCK_S=triton.next_power_of_2(S))
    return y


if __name__ == "__main__":
    torch.manual_seed(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    checks = [((64, 100), None, 1, False), ((12, 40, 10), (0, 2), 0, True),
              ((3, 1, 17, 5), 2, 2, False), ((1001, 3), 0, 1, True), ((2048, 2048), None, 1, False)]
    for shape, dim, corr, keep in checks:
        x = torch.randn(shape, device=dev) * 0.25 + 10.0
        exp = torch.std(x.double(), dim=dim, correction=corr, keepdim=keep).float()
        got = std(x, dim=dim, correction=corr, keepdim=keep)
        rel = ((got - exp).abs() / exp.abs()).max().item()
        print(f"{shape} dim={dim} correction={corr}: rel err {rel:.2e}")
        assert got.shape == exp.shape and rel < 1e-4
