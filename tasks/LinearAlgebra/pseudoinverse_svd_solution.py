import torch
import triton
import triton.language as tl

MAX_SWEEPS = 30
# A sweep in which every column pair was already orthogonal to this relative level ends the iteration.
OFF_TOL = 1e-7


@triton.jit
def jacobi_kernel(a_ptr, w_ptr, v_ptr, B, R, C, CP, stride_ab, t_rs, t_cs,
                  BG: tl.constexpr, BR: tl.constexpr, BC: tl.constexpr, BH: tl.constexpr,
                  MAX_SWEEPS: tl.constexpr, OFF_TOL: tl.constexpr):
    # One-sided (Hestenes) Jacobi on T (R x C, R >= C): T is A, or A^T for a wide A. Column j of T is
    # row j of the scratch W (contiguous); V starts as the identity and collects the same rotations.
    # Each step rotates CP/2 disjoint column pairs at once (round-robin ordering), so CP - 1 steps
    # are one sweep over all pairs. At the end the columns of W are mutually orthogonal: T V = W.
    # A program handles BG matrices (1 on a GPU); tile rows are (matrix, column or pair) couples.
    pid = tl.program_id(0).to(tl.int64)
    ii = tl.arange(0, BR)[None, :]
    rows = tl.arange(0, BG * BC)
    mat = pid * BG + rows // BC
    jj = rows % BC
    ok = ((mat < B) & (jj < C))[:, None]
    cc = tl.arange(0, BC)[None, :]
    tile = tl.load(a_ptr + mat[:, None] * stride_ab + ii * t_rs + jj[:, None] * t_cs, mask=ok & (ii < R), other=0.0)
    tl.store(w_ptr + (mat[:, None] * C + jj[:, None]) * R + ii, tile.to(tl.float32), mask=ok & (ii < R))
    tl.store(v_ptr + (mat[:, None] * C + jj[:, None]) * C + cc, tl.where(jj[:, None] == cc, 1.0, 0.0),
             mask=ok & (cc < C))
    tl.debug_barrier()

    pair = tl.arange(0, BG * BH)
    k = pair % BH
    live = (k < CP // 2) & (pid * BG + pair // BH < B)
    wbase = ((pid * BG + pair // BH) * C)[:, None]
    in_r = ii < R
    in_c = cc < C
    sweep = 0
    off = 1.0
    while (sweep < MAX_SWEEPS) & (off > OFF_TOL):
        off = 0.0
        for r in range(CP - 1):
            p = tl.where(k == 0, r, (r + k) % (CP - 1))
            q = tl.where(k == 0, CP - 1, (r - k + CP - 1) % (CP - 1))
            rp = wbase + p[:, None]
            rq = wbase + q[:, None]
            mp = (live & (p < C))[:, None]
            mq = (live & (q < C))[:, None]
            wp = w_ptr + rp * R + ii
            wq = w_ptr + rq * R + ii
            ap = tl.load(wp, mask=mp & in_r, other=0.0)
            aq = tl.load(wq, mask=mq & in_r, other=0.0)
            alpha = tl.sum(ap * ap, axis=1)
            beta = tl.sum(aq * aq, axis=1)
            gamma = tl.sum(ap * aq, axis=1)
            norm = tl.sqrt(alpha * beta)
            rotate = tl.abs(gamma) > OFF_TOL * norm
            off = tl.maximum(off, tl.max(tl.where(rotate, tl.abs(gamma) / tl.where(rotate, norm, 1.0), 0.0), axis=0))
            zeta = (beta - alpha) / (2.0 * tl.where(rotate, gamma, 1.0))
            t = tl.where(zeta >= 0.0, 1.0, -1.0) / (tl.abs(zeta) + tl.sqrt(1.0 + zeta * zeta))
            c = tl.where(rotate, 1.0 / tl.sqrt(1.0 + t * t), 1.0)[:, None]
            s = tl.where(rotate, t, 0.0)[:, None] * c
            tl.store(wp, c * ap - s * aq, mask=mp & in_r)
            tl.store(wq, s * ap + c * aq, mask=mq & in_r)
            vpp = v_ptr + rp * C + cc
            vqp = v_ptr + rq * C + cc
            vp = tl.load(vpp, mask=mp & in_c, other=0.0)
            vq = tl.load(vqp, mask=mq & in_c, other=0.0)
            tl.store(vpp, c * vp - s * vq, mask=mp & in_c)
            tl.store(vqp, s * vp + c * vq, mask=mq & in_c)
            tl.debug_barrier()
        sweep += 1


@triton.jit
def pinv_kernel(w_ptr, v_ptr, out_ptr, R, C, rcond, stride_ob, o_rs, o_cs, BR: tl.constexpr, BC: tl.constexpr):
    # After Jacobi, T V = W with orthogonal columns, so T = sum_j W_j V_j^T / |V_j|^2 and
    # T^+ = sum_j V_j W_j^T / |W_j|^2 over the singular values sigma_j = |W_j| / |V_j| above
    # rcond * max(sigma): out[c, r] = sum_j V[j, c] W[j, r] / |W_j|^2, a small matrix product.
    pid = tl.program_id(0).to(tl.int64)
    jj = tl.arange(0, BC)
    ii = tl.arange(0, BR)
    wt = tl.load(w_ptr + pid * C * R + jj[:, None] * R + ii[None, :], mask=(jj[:, None] < C) & (ii[None, :] < R),
                 other=0.0)
    vt = tl.load(v_ptr + pid * C * C + jj[:, None] * C + jj[None, :], mask=(jj[:, None] < C) & (jj[None, :] < C),
                 other=0.0)
    vn2 = tl.sum(vt * vt, axis=1)
    wn2 = tl.sum(wt * wt, axis=1)
    sig = tl.sqrt(wn2 / tl.where(vn2 > 0.0, vn2, 1.0))
    cutoff = rcond * tl.max(tl.where(jj < C, sig, 0.0), axis=0)
    coef = tl.where((jj < C) & (sig > cutoff) & (wn2 > 0.0), 1.0 / tl.where(wn2 > 0.0, wn2, 1.0), 0.0)
    res = tl.dot(tl.trans(vt * coef[:, None]), wt, input_precision="ieee")
    tl.store(out_ptr + pid * stride_ob + jj[:, None] * o_cs + ii[None, :] * o_rs, res,
             mask=(jj[:, None] < C) & (ii[None, :] < R))


def _blocks(R, C):
    cp = C + (C % 2)
    return (max(16, triton.next_power_of_2(R)), max(16, triton.next_power_of_2(C)),
            max(1, triton.next_power_of_2(max(1, cp // 2))), cp)


def pseudoinverse_svd(A, full_matrices=True, rcond=1e-15, out=None):
    # full_matrices only changes the shapes of torch's intermediate factors, never the pseudoinverse.
    if A.dim() < 2:
        raise ValueError(f"expected a (*, m, n) tensor, got shape {tuple(A.shape)}")
    m, n = A.shape[-2], A.shape[-1]
    a = A.contiguous().reshape(-1, m, n)
    batch = a.shape[0]
    result = torch.empty(tuple(A.shape[:-2]) + (n, m), dtype=A.dtype, device=A.device)
    if batch == 0 or m == 0 or n == 0:
        return result
    tall = m >= n
    R, C = (m, n) if tall else (n, m)
    t_rs, t_cs = (n, 1) if tall else (1, n)
    BR, BC, BH, CP = _blocks(R, C)
    w = torch.empty((batch, C, R), dtype=torch.float32, device=A.device)
    v = torch.empty((batch, C, C), dtype=torch.float32, device=A.device)
    warps = 4 if BR * BC <= 4096 else 8
    # the CPU interpreter runs programs one after another: there one program takes the whole batch
    bg = min(triton.next_power_of_2(batch), 64) if A.device.type == "cpu" else 1
    jacobi_kernel[(triton.cdiv(batch, bg),)](a, w, v, batch, R, C, CP, m * n, t_rs, t_cs, BG=bg, BR=BR, BC=BC,
                                             BH=BH, MAX_SWEEPS=MAX_SWEEPS, OFF_TOL=OFF_TOL, num_warps=warps)
    # the result (n x m) is T^+ (C x R) for a tall A and its transpose for a wide one:
    # element (c, r) of T^+ sits at c * o_cs + r * o_rs
    o_cs, o_rs = (m, 1) if tall else (1, m)
    pinv_kernel[(batch,)](w, v, result, R, C, float(rcond), m * n, o_rs, o_cs, BR=BR, BC=BC, num_warps=warps)
    if out is not None:
        out.copy_(result)
        return out
    return result
