import torch
import triton
import triton.language as tl

INV_SQRT_PI = tl.constexpr(0.5641895835477563)
QUARTER_PI = tl.constexpr(0.7853981633974483)
TWO_PI = tl.constexpr(6.283185307179586)
INV_TWO_PI = tl.constexpr(0.15915494309189535)
# Ai(0) and -Ai'(0): Ai = C1 f(x) - C2 g(x) with the Maclaurin series f and g
C1 = tl.constexpr(0.355028053887817239260)
C2 = tl.constexpr(0.258819403792806798405)
SERIES_TERMS = tl.constexpr(10)


@triton.jit
def _poly(z, c0, c1, c2, c3, c4, c5, c6, c7):
    return ((((((c0 * z + c1) * z + c2) * z + c3) * z + c4) * z + c5) * z + c6) * z + c7


@triton.jit
def airy_ai_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, SERIES_TERMS: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    # The three regions and rational fits of Cephes' airy(), as PyTorch evaluates them.

    # |x| < 2.09: Maclaurin series f = sum 3^k (1/3)_k x^3k / (3k)!, g = sum 3^k (2/3)_k x^(3k+1) / (3k+1)!
    xm = tl.minimum(tl.maximum(x, -2.09), 2.09)
    z3 = xm * xm * xm
    f = tl.full(x.shape, 1.0, tl.float32)
    g = xm
    tf = f
    tg = xm
    for k in tl.static_range(SERIES_TERMS):
        tf = tf * z3 * (1.0 / ((3 * k + 2) * (3 * k + 3)))
        tg = tg * z3 * (1.0 / ((3 * k + 3) * (3 * k + 4)))
        f += tf
        g += tg
    middle = C1 * f - C2 * g

    # x >= 2.09: Ai = exp(-zeta) / (2 sqrt(pi) x^(1/4)) * AN(1/zeta) / AD(1/zeta), zeta = 2/3 x^(3/2)
    xp = tl.maximum(x, 2.09)
    rp = tl.sqrt(xp)
    zeta = 2.0 * xp * rp / 3.0
    w = 1.0 / zeta
    an = _poly(w, 3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
               1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
               1.40264691163389668864e+01, 9.99999999999999995305e-01)
    ad = _poly(w, 5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
               1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
               1.40959135607834029598e+01, 1.00000000000000000470e+00)
    right = INV_SQRT_PI * (an / ad) / (2.0 * tl.sqrt(rp) * tl.exp(zeta))

    # x < -2.09: Ai = |x|^(-1/4) / sqrt(pi) * (sin(theta) (1 + z^2 F(z^2)) - cos(theta) z G(z^2)),
    # z = 1/zeta, theta = zeta + pi/4. The phase is formed and reduced modulo 2 pi in float64: in
    # float32 its rounding error alone (zeta * 6e-8) would reach 1e-4 radians at x = -600.
    a = tl.maximum(-x, 2.09)
    ra = tl.sqrt(a)
    zl = 1.0 / (2.0 * a * ra / 3.0)
    zz = zl * zl
    afn = _poly(zz, -1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
                -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
                -1.59276496239262096340e-04, -2.77649108155232920844e-06)
    afn = afn * zz - 1.67787698489114633780e-08
    afd = _poly(zz, 1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
                9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
                4.40291641615211203805e-03, 7.54720348287414296618e-05)
    afd = afd * zz + 4.51850092970580378464e-07
    agn = _poly(zz, 1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
                9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
                5.85804113048388458567e-03, 2.82851600836737019778e-04)
    agn = (agn * zz + 6.98793669997260967291e-06) * zz + 8.11789239554389293311e-08
    agn = agn * zz + 3.41551784765923618484e-10
    agd = _poly(zz, 9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
                5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
                4.12656523824222607191e-03, 1.01259085116509135510e-04)
    agd = (agd * zz + 1.17166733214413521882e-06) * zz + 4.91834570062930015649e-09
    a64 = a.to(tl.float64)
    theta = 2.0 * a64 * tl.sqrt(a64) / 3.0 + QUARTER_PI
    theta = theta - tl.floor(theta * INV_TWO_PI + 0.5) * TWO_PI
    t32 = theta.to(tl.float32)
    left = INV_SQRT_PI / tl.sqrt(ra) * (tl.sin(t32) * (1.0 + zz * afn / afd) - tl.cos(t32) * (zl * agn / agd))

    y = tl.where(x < -2.09, left, tl.where(x >= 2.09, right, middle))
    y = tl.where(x > 103.892, 0.0, y)
    y = tl.where(x != x, x, y)  # NaN stays NaN (the clamps above would hide it)
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def airy_ai(input, out=None):
    x = input.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    block = 1024
    airy_ai_kernel[(max(1, triton.cdiv(n, block)),)](x, y, n, BLOCK=block, SERIES_TERMS=SERIES_TERMS, num_warps=4)
    if out is not None:
        out.copy_(y)
        return out
    return y
