import torch
import triton
import triton.language as tl


@triton.jit
def _round_half_even(v):
    r = tl.floor(v + 0.5)
    tie = (r - v) == 0.5
    odd = (r - 2.0 * tl.floor(r * 0.5)) == 1.0
    return tl.where(tie & odd, r - 1.0, r)


@triton.jit
def grid_sample_kernel(x_ptr, g_ptr, y_ptr, C, H, W, Hf, Wf, P,
                       sxn, sxc, sxh, sxw, sgn, sgp, sgk, syn, syc, syp,
                       NEAREST: tl.constexpr, BORDER: tl.constexpr, ALIGN: tl.constexpr,
                       BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    # one program: BLOCK_P output pixels of image n; coordinates once, then all channels in tiles.
    # Hf, Wf are H, W as floats from the host (an int argument equal to 1 becomes a constexpr on the GPU).
    pid_p = tl.program_id(0)
    n = tl.program_id(1).to(tl.int64)
    offs_p = (pid_p * BLOCK_P + tl.arange(0, BLOCK_P)).to(tl.int64)
    mask_p = offs_p < P
    gx = tl.load(g_ptr + n * sgn + offs_p * sgp, mask=mask_p, other=0.0).to(tl.float32)
    gy = tl.load(g_ptr + n * sgn + offs_p * sgp + sgk, mask=mask_p, other=0.0).to(tl.float32)
    if ALIGN:
        ix = (gx + 1.0) * 0.5 * (Wf - 1.0)
        iy = (gy + 1.0) * 0.5 * (Hf - 1.0)
    else:
        ix = ((gx + 1.0) * Wf - 1.0) * 0.5
        iy = ((gy + 1.0) * Hf - 1.0) * 0.5
    if BORDER:
        ix = tl.minimum(tl.maximum(ix, 0.0), Wf - 1.0)
        iy = tl.minimum(tl.maximum(iy, 0.0), Hf - 1.0)
    offs_c = tl.arange(0, BLOCK_C)
    x_base = x_ptr + n * sxn
    y_base = y_ptr + n * syn
    if NEAREST:
        # clamp far-away coordinates before the integer conversion; they stay out of range
        fx = _round_half_even(tl.minimum(tl.maximum(ix, -2.0), Wf + 1.0))
        fy = _round_half_even(tl.minimum(tl.maximum(iy, -2.0), Hf + 1.0))
        xi = fx.to(tl.int64)
        yi = fy.to(tl.int64)
        ok = mask_p & (xi >= 0) & (xi < W) & (yi >= 0) & (yi < H)
        src = yi * sxh + xi * sxw
        for c0 in range(0, C, BLOCK_C):
            cc = (c0 + offs_c).to(tl.int64)
            mc = cc < C
            v = tl.load(x_base + cc[:, None] * sxc + src[None, :], mask=mc[:, None] & ok[None, :], other=0.0)
            tl.store(y_base + cc[:, None] * syc + offs_p[None, :] * syp, v,
                     mask=mc[:, None] & mask_p[None, :])
    else:
        fx0 = tl.floor(tl.minimum(tl.maximum(ix, -2.0), Wf + 1.0))
        fy0 = tl.floor(tl.minimum(tl.maximum(iy, -2.0), Hf + 1.0))
        tx = ix - fx0
        ty = iy - fy0
        x0 = fx0.to(tl.int64)
        y0 = fy0.to(tl.int64)
        x1 = x0 + 1
        y1 = y0 + 1
        okx0 = (x0 >= 0) & (x0 < W)
        okx1 = (x1 >= 0) & (x1 < W)
        oky0 = mask_p & (y0 >= 0) & (y0 < H)
        oky1 = mask_p & (y1 >= 0) & (y1 < H)
        w00 = (1.0 - tx) * (1.0 - ty)
        w01 = tx * (1.0 - ty)
        w10 = (1.0 - tx) * ty
        w11 = tx * ty
        for c0 in range(0, C, BLOCK_C):
            cc = (c0 + offs_c).to(tl.int64)
            mc = cc[:, None] < C
            plane = x_base + cc[:, None] * sxc
            v00 = tl.load(plane + (y0 * sxh + x0 * sxw)[None, :], mask=mc & (oky0 & okx0)[None, :], other=0.0)
            v01 = tl.load(plane + (y0 * sxh + x1 * sxw)[None, :], mask=mc & (oky0 & okx1)[None, :], other=0.0)
            v10 = tl.load(plane + (y1 * sxh + x0 * sxw)[None, :], mask=mc & (oky1 & okx0)[None, :], other=0.0)
            v11 = tl.load(plane + (y1 * sxh + x1 * sxw)[None, :], mask=mc & (oky1 & okx1)[None, :], other=0.0)
            out = (v00.to(tl.float32) * w00[None, :] + v01.to(tl.float32) * w01[None, :]
                   + v10.to(tl.float32) * w10[None, :] + v11.to(tl.float32) * w11[None, :])
            tl.store(y_base + cc[:, None] * syc + offs_p[None, :] * syp, out.to(y_ptr.dtype.element_ty),
                     mask=mc & mask_p[None, :])


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=False):
    if mode not in ("bilinear", "nearest"):
        raise NotImplementedError(f"mode {mode!r} is not supported")
    if padding_mode not in ("zeros", "border"):
        raise NotImplementedError(f"padding_mode {padding_mode!r} is not supported")
    if input.dim() != 4 or grid.dim() != 4 or grid.shape[-1] != 2 or grid.shape[0] != input.shape[0]:
        raise ValueError("input must be (N, C, H, W) and grid (N, H_out, W_out, 2)")
    n, c, h, w = input.shape
    h_out, w_out = grid.shape[1], grid.shape[2]
    p = h_out * w_out
    g = grid.contiguous().view(n, p, 2)
    y = torch.empty((n, c, h_out, w_out), device=input.device, dtype=input.dtype)
    if y.numel() == 0:
        return y
    yv = y.view(n, c, p)
    block_p = min(256, max(16, triton.next_power_of_2(p)))
    block_c = min(16, triton.next_power_of_2(c))
    grid_dims = (triton.cdiv(p, block_p), n)
    grid_sample_kernel[grid_dims](input, g, yv, c, h, w, float(h), float(w), p,
                                  input.stride(0), input.stride(1), input.stride(2), input.stride(3),
                                  g.stride(0), g.stride(1), g.stride(2), yv.stride(0), yv.stride(1), yv.stride(2),
                                  NEAREST=mode == "nearest", BORDER=padding_mode == "border",
                                  ALIGN=bool(align_corners), BLOCK_C=block_c, BLOCK_P=block_p, num_warps=4)
    return y
