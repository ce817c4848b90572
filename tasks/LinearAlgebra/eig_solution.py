import torch
import triton
import triton.language as tl

# QR iterations allowed per matrix row before giving up (Wilkinson shifts need about two or three).
ITERS_PER_ROW = 30
# Row hi is deflated when |H[hi, hi-1]| is below this fraction of |H[hi-1, hi-1]| + |H[hi, hi]|
# (about one float32 ulp).
DEFLATE_TOL = 1.2e-7


@triton.jit
def schur_kernel(a_ptr, t_ptr, z_ptr, B, n, max_iters, BG: tl.constexpr, BN: tl.constexpr,
                 DEFLATE_TOL: tl.constexpr):
    # Real Schur form A = Z T Z^T, held in registers; a program takes BG matrices (1 on a GPU).
    # 1. Hessenberg form H = Z^T A Z by Householder reflectors (zeros below the first subdiagonal).
    # 2. Shifted QR steps on the active leading block (rows and columns 0..hi): H - mu I = Q R by
    #    Givens rotations of neighbouring rows, then H <- R Q + mu I (the same rotations on the
    #    columns, and on the columns of Z). When the subdiagonal entry H[hi, hi-1] is negligible,
    #    row hi is deflated and hi moves up. The inputs' eigenvalues are real, so T ends upper triangular.
    pid = tl.program_id(0).to(tl.int64)
    g = tl.arange(0, BG)
    rows = tl.arange(0, BN)[None, :, None]
    cols = tl.arange(0, BN)[None, None, :]
    idx = tl.arange(0, BN)[None, :]
    mat = pid * BG + g
    valid = mat < B
    inside = valid[:, None, None] & (rows < n) & (cols < n)
    offs = mat[:, None, None] * n * n + rows * n + cols
    h = tl.load(a_ptr + offs, mask=inside, other=0.0).to(tl.float32)
    z = tl.where((rows == cols) & inside, 1.0, 0.0)
    for j in range(n - 2):
        x = tl.sum(tl.where(cols == j, h, 0.0), axis=2)
        x = tl.where(idx > j, x, 0.0)
        x0 = tl.sum(tl.where(idx == j + 1, x, 0.0), axis=1)
        nx = tl.sqrt(tl.sum(x * x, axis=1))
        alpha = tl.where(x0 >= 0.0, nx, -nx)
        v = tl.where(idx == j + 1, x + alpha[:, None], x)
        vn = tl.sqrt(2.0 * nx * (nx + tl.abs(x0)))  # |v| without another reduction
        v = v / tl.where(vn > 0.0, vn, 1.0)[:, None]
        vc = v[:, :, None]
        vr = v[:, None, :]
        h -= 2.0 * vc * tl.sum(vc * h, axis=1)[:, None, :]
        h -= 2.0 * tl.sum(h * vr, axis=2)[:, :, None] * vr
        z -= 2.0 * tl.sum(z * vr, axis=2)[:, :, None] * vr
    h = tl.where(rows > cols + 1, 0.0, h)

    hi = tl.where(valid, n - 1, 0)
    stall = tl.zeros([BG], dtype=tl.int32)
    it = 0
    while (it < max_iters) & (tl.max(hi, axis=0) > 0):
        h3 = hi[:, None, None]
        h2 = hi[:, None]
        row_hi = tl.sum(tl.where(rows == h3, h, 0.0), axis=1)
        row_up = tl.sum(tl.where(rows == h3 - 1, h, 0.0), axis=1)
        a = tl.sum(tl.where(idx == h2 - 1, row_up, 0.0), axis=1)
        b = tl.sum(tl.where(idx == h2, row_up, 0.0), axis=1)
        c = tl.sum(tl.where(idx == h2 - 1, row_hi, 0.0), axis=1)
        d = tl.sum(tl.where(idx == h2, row_hi, 0.0), axis=1)
        deflate = (tl.abs(c) <= DEFLATE_TOL * (tl.abs(a) + tl.abs(d))) & (hi > 0)
        # Wilkinson shift: the eigenvalue of the trailing 2 x 2 block nearer its last diagonal entry
        half = 0.5 * (a - d)
        disc = half * half + b * c
        root = tl.sqrt(tl.maximum(disc, 0.0))
        mu = tl.where(disc >= 0.0, d - b * c / (half + tl.where(half >= 0.0, root, -root) + 1e-30), d + half)
        # an exceptional shift breaks the rare cycles
        mu = tl.where(stall % 11 == 10, d + 1.5 * tl.abs(c), mu)
        h = tl.where((rows == h3) & (cols == h3 - 1), tl.where(deflate[:, None, None], 0.0, h), h)
        steps = tl.where(deflate | (hi <= 0), 0, hi)
        shift = tl.where((rows == cols) & (rows <= h3), mu[:, None, None], 0.0)
        h -= shift
        cs = tl.zeros([BG, BN], dtype=tl.float32) + 1.0
        sn = tl.zeros([BG, BN], dtype=tl.float32)
        nsteps = tl.max(steps, axis=0)
        for i in range(nsteps):
            r0 = tl.sum(tl.where(rows == i, h, 0.0), axis=1)
            r1 = tl.sum(tl.where(rows == i + 1, h, 0.0), axis=1)
            p = tl.sum(tl.where(idx == i, r0, 0.0), axis=1)
            q = tl.sum(tl.where(idx == i, r1, 0.0), axis=1)
            rr = tl.sqrt(p * p + q * q)
            use = (i < steps) & (rr > 0.0)
            co = tl.where(use, p / tl.where(use, rr, 1.0), 1.0)
            si = tl.where(use, q / tl.where(use, rr, 1.0), 0.0)
            cs = tl.where(idx == i, co[:, None], cs)
            sn = tl.where(idx == i, si[:, None], sn)
            c3 = co[:, None, None]
            s3 = si[:, None, None]
            h = tl.where(rows == i, c3 * r0[:, None, :] + s3 * r1[:, None, :],
                         tl.where(rows == i + 1, c3 * r1[:, None, :] - s3 * r0[:, None, :], h))
        for i in range(nsteps):
            co = tl.sum(tl.where(idx == i, cs, 0.0), axis=1)[:, None, None]
            si = tl.sum(tl.where(idx == i, sn, 0.0), axis=1)[:, None, None]
            k0 = tl.sum(tl.where(cols == i, h, 0.0), axis=2)[:, :, None]
            k1 = tl.sum(tl.where(cols == i + 1, h, 0.0), axis=2)[:, :, None]
            h = tl.where(cols == i, co * k0 + si * k1, tl.where(cols == i + 1, co * k1 - si * k0, h))
            k0 = tl.sum(tl.where(cols == i, z, 0.0), axis=2)[:, :, None]
            k1 = tl.sum(tl.where(cols == i + 1, z, 0.0), axis=2)[:, :, None]
            z = tl.where(cols == i, co * k0 + si * k1, tl.where(cols == i + 1, co * k1 - si * k0, z))
        h += shift
        hi = tl.where(deflate, hi - 1, hi)
        stall = tl.where(deflate, 0, stall + 1)
        it += 1
    h = tl.where(rows > cols, 0.0, h)
    tl.store(t_ptr + offs, h, mask=inside)
    tl.store(z_ptr + offs, z, mask=inside)


@triton.jit
def eigvec_kernel(t_ptr, z_ptr, lam_ptr, vec_ptr, n, BN: tl.constexpr):
    # Eigenvectors of the triangular T: Y upper triangular with a unit diagonal, column k solving
    # (T - t_kk I) y = 0, found row by row from the bottom: Y[i, k] = -sum_{j>i} T[i, j] Y[j, k] / (t_ii - t_kk).
    # The eigenvectors of A are the columns of Z Y, normalized. Outputs are complex: (re, im) pairs.
    pid = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, BN)[:, None]
    cols = tl.arange(0, BN)[None, :]
    idx = tl.arange(0, BN)
    inside = (rows < n) & (cols < n)
    offs = pid * n * n + rows * n + cols
    t = tl.load(t_ptr + offs, mask=inside, other=0.0)
    z = tl.load(z_ptr + offs, mask=inside, other=0.0)
    lam = tl.sum(tl.where(rows == cols, t, 0.0), axis=0)
    y = tl.where((rows == cols) & inside, 1.0, 0.0)
    for ii in range(n):
        i = n - 1 - ii
        t_row = tl.sum(tl.where(rows == i, t, 0.0), axis=0)
        t_ii = tl.sum(tl.where(idx == i, t_row, 0.0), axis=0)
        t_row = tl.where(idx > i, t_row, 0.0)
        s = tl.sum(t_row[:, None] * y, axis=0)
        gap = t_ii - lam
        gap = tl.where(gap == 0.0, 1e-30, gap)
        y_row = tl.where((idx > i) & (idx < n), -s / gap, 0.0)
        y = tl.where((rows == i) & (cols > i), y_row[None, :], y)
    vec = tl.dot(z, y, input_precision="ieee")
    norm = tl.sqrt(tl.sum(vec * vec, axis=0))
    vec = vec / tl.where(norm > 0.0, norm, 1.0)[None, :]
    tl.store(vec_ptr + 2 * offs, vec, mask=inside)
    tl.store(vec_ptr + 2 * offs + 1, tl.zeros_like(vec), mask=inside)
    tl.store(lam_ptr + 2 * (pid * n + idx), lam, mask=idx < n)
    tl.store(lam_ptr + 2 * (pid * n + idx) + 1, tl.zeros_like(lam), mask=idx < n)


def eig(A):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"eig expects a (*, n, n) tensor, got shape {tuple(A.shape)}")
    n = A.shape[-1]
    a = A.contiguous().reshape(-1, n, n)
    batch = a.shape[0]
    lam = torch.empty(tuple(A.shape[:-1]) + (2,), dtype=torch.float32, device=A.device)
    vec = torch.empty(tuple(A.shape) + (2,), dtype=torch.float32, device=A.device)
    if batch == 0 or n == 0:
        return torch.view_as_complex(lam), torch.view_as_complex(vec)
    t = torch.empty((batch, n, n), dtype=torch.float32, device=A.device)
    z = torch.empty((batch, n, n), dtype=torch.float32, device=A.device)
    bn = max(16, triton.next_power_of_2(n))
    warps = 4 if bn <= 32 else 8
    # the CPU interpreter runs programs one after another: there one program takes the whole batch
    bg = min(triton.next_power_of_2(batch), 16) if A.device.type == "cpu" else 1
    schur_kernel[(triton.cdiv(batch, bg),)](a, t, z, batch, n, ITERS_PER_ROW * n, BG=bg, BN=bn,
                                            DEFLATE_TOL=DEFLATE_TOL, num_warps=warps)
    eigvec_kernel[(batch,)](t, z, lam, vec, n, BN=bn, num_warps=warps)
    return torch.view_as_complex(lam), torch.view_as_complex(vec)
