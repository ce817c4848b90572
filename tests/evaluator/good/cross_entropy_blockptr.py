# task: Loss/cross_entropy
# style: 2-D block pointers advanced along the class dim (tl.make_block_ptr / tl.advance), online log-sum-exp, __main__ self-test
import torch
import triton
import triton.language as tl


@triton.jit
def ce_rows_kernel(
    logits_ptr, target_ptr, weight_ptr, loss_ptr, wsum_ptr,
    N, C, stride_n, stride_c, ignore_index,
    HAS_WEIGHT: tl.constexpr, BLOCK_C: tl.constexpr,
):
    row = tl.program_id(0)
    blk = tl.make_block_ptr(
        base=logits_ptr, shape=(N, C), strides=(stride_n, stride_c),
        offsets=(row, 0), block_shape=(1, BLOCK_C), order=(1, 0),
    )
    m = tl.full([1], float("-inf"), tl.float32)   # running max of the row
    s = tl.zeros([1], dtype=tl.float32)            # running sum of exp(x - m)
    for start in range(0, C, BLOCK_C):
        cols = start + tl.arange(0, BLOCK_C)[None, :]
        x = tl.load(blk, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        x = tl.where(cols < C, x, float("-inf"))
        m_new = tl.maximum(m, tl.max(x, axis=1))          # finite: every chunk holds a real class
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new[:, None]), axis=1)
        m = m_new
        blk = tl.advance(blk, (0, BLOCK_C))
    lse = m + tl.log(s)                                    # shape [1]

    t = tl.load(target_ptr + row)
    valid = t != ignore_index
    t_safe = tl.where(valid, t, 0)
    x_t = tl.load(logits_ptr + row.to(tl.int64) * stride_n + t_safe * stride_c).to(tl.float32)
    if HAS_WEIGHT:
        w = tl.load(weight_ptr + t_safe).to(tl.float32)
    else:
        w = 1.0
    w = tl.where(valid, w, 0.0)
    loss = w * (lse - x_t)
    loss = tl.where(valid, loss, 0.0)
    tl.store(loss_ptr + row + tl.arange(0, 1), loss)
    tl.store(wsum_ptr + row, w)


@triton.jit
def ce_reduce_kernel(loss_ptr, wsum_ptr, out_ptr, N, IS_MEAN: tl.constexpr, BLOCK: tl.constexpr):
    acc_l = tl.zeros([BLOCK], dtype=tl.float32)
    acc_w = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        msk = idx < N
        acc_l += tl.load(loss_ptr + idx, mask=msk, other=0.0)
        acc_w += tl.load(wsum_ptr + idx, mask=msk, other=0.0)
    total = tl.sum(acc_l, axis=0)
    if IS_MEAN:
        total = total / tl.sum(acc_w, axis=0)
    tl.store(out_ptr, total.to(out_ptr.dtype.element_ty))


@triton.jit
def ce_cast_kernel(src_ptr, dst_ptr, N, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    msk = idx < N
    tl.store(dst_ptr + idx, tl.load(src_ptr + idx, mask=msk).to(dst_ptr.dtype.element_ty), mask=msk)


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean"):
    assert input.dim() == 2 and target.dim() == 1 and target.shape[0] == input.shape[0]
    N, C = input.shape
    dev = input.device
    losses = torch.empty(N, device=dev, dtype=torch.float32)
    wsums = torch.empty(N, device=dev, dtype=torch.float32)
    BLOCK_C = min(triton.next_power_of_2(C), 4096)
    ce_rows_kernel[(N,)](
        input, target, weight if weight is not None else losses, losses, wsums,
        N, C, input.stride(0), input.stride(1), ignore_index,
        HAS_WEIGHT=weight is not None, BLOCK_C=BLOCK_C, num_warps=8 if BLOCK_C >= 2048 else 4,
    )
    if reduction == "none":
        out = torch.empty(N, device=dev, dtype=input.dtype)
        ce_cast_kernel[(triton.cdiv(N, 1024),)](losses, out, N, BLOCK=1024)
        return out
    out = torch.empty((), device=dev, dtype=input.dtype)
    ce_reduce_kernel[(1,)](losses, wsums, out, N, IS_MEAN=(reduction == "mean"), BLOCK=1024)
    return out


if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    for n, c, red, weighted, ign in [(64, 100, "mean", False, -100), (50, 37, "sum", True, -100),
                                     (3, 1001, "none", True, -100), (1001, 3, "mean", True, 1),
                                     (256, 16384, "mean", True, -100)]:
        logits = torch.randn(n, c, device=dev) * 2
        tgt = torch.randint(0, c, (n,), device=dev)
        if ign < 0:
            tgt[n // 2] = ign
        w = torch.rand(c, device=dev) * 1.8 + 0.2 if weighted else None
        ref = F.cross_entropy(logits, tgt, weight=w, ignore_index=ign, reduction=red)
        got = cross_entropy(logits, tgt, weight=w, ignore_index=ign, reduction=red)
        ok = torch.allclose(got, ref, atol=1e-4, rtol=1e-4)
        print(f"N={n} C={c} {red}: {'ok' if ok else 'MISMATCH'}")
