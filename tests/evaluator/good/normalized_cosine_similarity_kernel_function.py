# task: Normalization/normalized_cosine_similarity
# style: kernel_function entry, 2-D tiles over broadcast strides (expand/movedim, no copies), constexpr p-norm specialisation, __main__ self-test
import torch
import triton
import triton.language as tl


@triton.jit
def _abs_pow(ax, p, P_MODE: tl.constexpr):
    if P_MODE == 1:
        return ax
    elif P_MODE == 2:
        return ax * ax
    else:
        return tl.exp2(p * tl.log2(ax))  # 0 -> exp2(-inf) = 0


@triton.jit
def _root(s, p, P_MODE: tl.constexpr):
    if P_MODE == 1:
        return s
    elif P_MODE == 2:
        return tl.sqrt(s)
    else:
        return tl.exp2(tl.log2(s) / p)


@triton.jit
def norm_cos_kernel(
    x1_ptr, x2_ptr, out_ptr,
    R, D1, D2, D,
    a0, a1, a2, ad,
    b0, b1, b2, bd,
    p, eps_norm, eps_sim,
    P_MODE: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr,
):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    rmask = rows < R
    i2 = rows % D2
    i1 = (rows // D2) % D1
    i0 = rows // (D2 * D1)
    base1 = i0 * a0 + i1 * a1 + i2 * a2
    base2 = i0 * b0 + i1 * b1 + i2 * b2

    s1p = tl.zeros([BLOCK_R, BLOCK_D], dtype=tl.float32)
    s2p = tl.zeros([BLOCK_R, BLOCK_D], dtype=tl.float32)
    s11 = tl.zeros([BLOCK_R, BLOCK_D], dtype=tl.float32)
    s22 = tl.zeros([BLOCK_R, BLOCK_D], dtype=tl.float32)
    s12 = tl.zeros([BLOCK_R, BLOCK_D], dtype=tl.float32)
    for start in range(0, D, BLOCK_D):
        k = start + tl.arange(0, BLOCK_D).to(tl.int64)
        mask = rmask[:, None] & (k < D)[None, :]
        x1 = tl.load(x1_ptr + base1[:, None] + k[None, :] * ad, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(x2_ptr + base2[:, None] + k[None, :] * bd, mask=mask, other=0.0).to(tl.float32)
        s11 += x1 * x1
        s22 += x2 * x2
        s12 += x1 * x2
        if P_MODE != 2:
            s1p += _abs_pow(tl.abs(x1), p, P_MODE)
            s2p += _abs_pow(tl.abs(x2), p, P_MODE)

    sq1 = tl.sum(s11, axis=1)
    sq2 = tl.sum(s22, axis=1)
    dot = tl.sum(s12, axis=1)
    if P_MODE == 2:
        n1 = tl.sqrt(sq1)
        n2 = tl.sqrt(sq2)
    else:
        n1 = _root(tl.sum(s1p, axis=1), p, P_MODE)
        n2 = _root(tl.sum(s2p, axis=1), p, P_MODE)
    # F.normalize: u = x1 / max(||x1||_p, eps_norm)
    n1 = tl.maximum(n1, eps_norm)
    n2 = tl.maximum(n2, eps_norm)
    # F.cosine_similarity on u, v: sum(u / max(||u||, eps) * v / max(||v||, eps))
    u_len = tl.maximum(tl.sqrt(sq1) / n1, eps_sim)
    v_len = tl.maximum(tl.sqrt(sq2) / n2, eps_sim)
    res = (dot / (n1 * n2)) / (u_len * v_len)
    tl.store(out_ptr + rows, res.to(out_ptr.dtype.element_ty), mask=rmask)


def kernel_function(x1, x2, dim=1, eps_similarity=1e-8, p_norm=2, eps_norm=1e-12):
    assert x1.dim() == x2.dim(), "x1 and x2 must have the same number of dims"
    nd = x1.dim()
    d = dim % nd
    shape = torch.broadcast_shapes(x1.shape, x2.shape)
    # views only: broadcast dims get stride 0, the reduced dim goes last
    a = x1.expand(shape).movedim(d, -1)
    b = x2.expand(shape).movedim(d, -1)
    out_shape = tuple(a.shape[:-1])
    assert len(out_shape) <= 3, "up to 4-D inputs are supported"
    pad = 3 - len(out_shape)
    sizes = [1] * pad + list(out_shape)
    sa = [0] * pad + list(a.stride()[:-1])
    sb = [0] * pad + list(b.stride()[:-1])
    D = a.shape[-1]
    R = 1
    for s in out_shape:
        R *= s
    out = torch.empty(out_shape, dtype=x1.dtype, device=x1.device)
    if R == 0:
        return out

    p = float(p_norm)
    p_mode = 1 if p == 1.0 else 2 if p == 2.0 else 0
    BLOCK_D = min(triton.next_power_of_2(max(D, 1)), 256)
    BLOCK_R = max(1, min(64, 4096 // BLOCK_D))
    grid = (triton.cdiv(R, BLOCK_R),)
    norm_cos_kernel[grid](
        a, b, out,
        R, sizes[1], sizes[2], D,
        sa[0], sa[1], sa[2], a.stride(-1),
        sb[0], sb[1], sb[2], b.stride(-1),
        p, float(eps_norm), float(eps_similarity),
        P_MODE=p_mode, BLOCK_R=BLOCK_R, BLOCK_D=BLOCK_D, num_warps=4,
    )
    return out


if __name__ == "__main__":
    import torch.nn.functional as F

    def ref(x1, x2, dim, p):
        u = F.normalize(x1, p=p, dim=dim, eps=1e-12)
        v = F.normalize(x2, p=p, dim=dim, eps=1e-12)
        return F.cosine_similarity(u, v, dim=dim, eps=1e-8)

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    for s1, s2, dim, p in [((8, 64, 40), (8, 64, 40), 1, 2), ((48, 96), (1, 96), -1, 1),
                           ((1001, 3), (1001, 3), 0, 3.0), ((3, 5, 1, 7), (3, 1, 1, 7), 3, 2)]:
        x1, x2 = torch.randn(s1, device=dev), torch.randn(s2, device=dev)
        got = kernel_function(x1, x2, dim=dim, p_norm=p)
        exp = ref(x1, x2, dim, p)
        print(s1, s2, dim, p, "max err", (got - exp).abs().max().item())
        torch.testing.assert_close(got, exp, atol=1e-5, rtol=1e-4)
    print("PASSED")
