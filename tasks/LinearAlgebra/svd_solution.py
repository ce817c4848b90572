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
def finish_kernel(w_ptr, v_ptr, s_ptr, x_ptr, y_ptr, R, C, stride_sb,
                  stride_xb, x_rs, x_ks, stride_yb, y_cs, y_ks, COMPLETE: tl.constexpr,
                  BR: tl.constexpr, BC: tl.constexpr):
    # Singular values are the column norms of W, ranked in descending order. X receives the unit
    # columns of W (R-long singular vectors) and Y the columns of V (C-long ones), each at its rank;
    # with COMPLETE, X's remaining R - C vectors complete an orthonormal basis of R-space.
    pid = tl.program_id(0).to(tl.int64)
    w = w_ptr + pid * C * R
    v = v_ptr + pid * C * C
    jj = tl.arange(0, BC)
    ii = tl.arange(0, BR)
    wt = tl.load(w + jj[:, None] * R + ii[None, :], mask=(jj[:, None] < C) & (ii[None, :] < R), other=0.0)
    vt = tl.load(v + jj[:, None] * C + jj[None, :], mask=(jj[:, None] < C) & (jj[None, :] < C), other=0.0)
    # rotations drift the norms of V's rows by a few ulps each; normalize them (and sigma with them)
    vn = tl.sqrt(tl.sum(vt * vt, axis=1))
    vn = tl.where(vn > 0.0, vn, 1.0)
    vt = vt / vn[:, None]
    sig = tl.sqrt(tl.sum(wt * wt, axis=1)) / vn
    # rank[j] = how many singular values come before j (larger, or equal with a smaller index)
    si = sig[None, :]
    sj = sig[:, None]
    before = ((si > sj) | ((si == sj) & (jj[None, :] < jj[:, None]))) & (jj[None, :] < C)
    rank = tl.sum(before.to(tl.int32), axis=1)
    ok = jj < C
    tl.store(s_ptr + pid * stride_sb + rank, sig, mask=ok)
    u = wt / tl.where(sig > 0.0, sig * vn, 1.0)[:, None]
    tl.store(x_ptr + pid * stride_xb + rank[:, None] * x_ks + ii[None, :] * x_rs, u,
             mask=ok[:, None] & (ii[None, :] < R))
    tl.store(y_ptr + pid * stride_yb + rank[:, None] * y_ks + jj[None, :] * y_cs, vt,
             mask=ok[:, None] & (jj[None, :] < C))
    if COMPLETE:
        # P = I - sum_j u_j u_j^T projects onto the complement; its largest column, normalized, is the
        # next basis vector, which is then removed from P.
        rows = ii[:, None]
        cols = ii[None, :]
        p = tl.where((rows == cols) & (rows < R), 1.0, 0.0)
        for j in range(C):
            uj = tl.load(w + j * R + ii, mask=ii < R, other=0.0)
            uj = uj / tl.sqrt(tl.sum(uj * uj, axis=0))
            p -= uj[:, None] * uj[None, :]
        for t in range(R - C):
            norms = tl.sum(p * p, axis=0)
            best = tl.max(norms, axis=0)
            pick = tl.min(tl.where((norms == best) & (ii < R), ii, BR), axis=0)
            col = tl.sum(tl.where(cols == pick, p, 0.0), axis=1)
            row = tl.sum(tl.where(rows == pick, p, 0.0), axis=0)
            scale = 1.0 / tl.sqrt(best)
            tl.store(x_ptr + pid * stride_xb + (C + t) * x_ks + ii * x_rs, col * scale, mask=ii < R)
            p -= (col * scale)[:, None] * (row * scale)[None, :]


def _blocks(R, C):
    cp = C + (C % 2)
    return (max(16, triton.next_power_of_2(R)), max(16, triton.next_power_of_2(C)),
            max(1, triton.next_power_of_2(max(1, cp // 2))), cp)


def svd(A, full_matrices=True):
    if A.dim() < 2:
        raise ValueError(f"svd expects a (*, m, n) tensor, got shape {tuple(A.shape)}")
    m, n = A.shape[-2], A.shape[-1]
    batch_shape = tuple(A.shape[:-2])
    a = A.contiguous().reshape(-1, m, n)
    batch = a.shape[0]
    k = min(m, n)
    U = torch.empty(batch_shape + ((m, m) if full_matrices else (m, k)), dtype=A.dtype, device=A.device)
    S = torch.empty(batch_shape + (k,), dtype=A.dtype, device=A.device)
    Vh = torch.empty(batch_shape + ((n, n) if full_matrices else (k, n)), dtype=A.dtype, device=A.device)
    if batch == 0 or k == 0:
        return U, S, Vh
    tall = m >= n
    R, C = (m, n) if tall else (n, m)
    # T = A (tall) or A^T (wide): element (i, j) of T sits at i * t_rs + j * t_cs in A.
    t_rs, t_cs = (n, 1) if tall else (1, n)
    BR, BC, BH, CP = _blocks(R, C)
    w = torch.empty((batch, C, R), dtype=torch.float32, device=A.device)
    v = torch.empty((batch, C, C), dtype=torch.float32, device=A.device)
    warps = 4 if BR * BC <= 4096 else 8
    # the CPU interpreter runs programs one after another: there one program takes the whole batch
    bg = min(triton.next_power_of_2(batch), 64) if A.device.type == "cpu" else 1
    jacobi_kernel[(triton.cdiv(batch, bg),)](a, w, v, batch, R, C, CP, m * n, t_rs, t_cs, BG=bg, BR=BR, BC=BC, BH=BH,
                            MAX_SWEEPS=MAX_SWEEPS, OFF_TOL=OFF_TOL, num_warps=warps)
    u3 = U.reshape(batch, m, U.shape[-1])
    vh3 = Vh.reshape(batch, Vh.shape[-2], n)
    s2 = S.reshape(batch, k)
    if tall:
        # U[:, rank] = W_j / sigma_j (R = m long), Vh[rank, :] = V_j (C = n long)
        x, x_rs, x_ks = u3, u3.stride(1), u3.stride(2)
        y, y_cs, y_ks = vh3, vh3.stride(2), vh3.stride(1)
    else:
        # Vh[rank, :] = W_j / sigma_j (R = n long), U[:, rank] = V_j (C = m long)
        x, x_rs, x_ks = vh3, vh3.stride(2), vh3.stride(1)
        y, y_cs, y_ks = u3, u3.stride(1), u3.stride(2)
    complete = bool(full_matrices) and R > C
    finish_kernel[(batch,)](w, v, s2, x, y, R, C, s2.stride(0), x.stride(0), x_rs, x_ks,
                            y.stride(0), y_cs, y_ks, COMPLETE=complete, BR=BR, BC=BC,
                            num_warps=8 if complete and BR >= 64 else warps)
    return U, S, Vh
