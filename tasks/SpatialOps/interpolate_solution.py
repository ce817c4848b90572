import math

import torch
import triton
import triton.language as tl


@triton.jit
def interpolate_kernel(
    x_ptr, y_ptr, H, W, OH, OW, scale_h, scale_w, num_th, num_tw,
    BILINEAR: tl.constexpr, ALIGN: tl.constexpr,
    BLOCK_H: tl.constexpr, BLOCK_W: tl.constexpr,
):
    pid = tl.program_id(0)
    tw = pid % num_tw
    rest = pid // num_tw
    th = rest % num_th
    plane = rest // num_th

    oh = th * BLOCK_H + tl.arange(0, BLOCK_H)
    ow = tw * BLOCK_W + tl.arange(0, BLOCK_W)
    mask = (oh < OH)[:, None] & (ow < OW)[None, :]
    x_base = x_ptr + plane.to(tl.int64) * H * W
    y_base = y_ptr + plane.to(tl.int64) * OH * OW
    fh = oh.to(tl.float32)
    fw = ow.to(tl.float32)

    if BILINEAR:
        if ALIGN:
            src_h = scale_h * fh
            src_w = scale_w * fw
        else:
            # torch's compiled kernels contract scale * (dst + 0.5) - 0.5 into one fma
            src_h = tl.maximum(tl.fma(fh + 0.5, scale_h, -0.5), 0.0)
            src_w = tl.maximum(tl.fma(fw + 0.5, scale_w, -0.5), 0.0)
        h0 = tl.minimum(src_h.to(tl.int32), H - 1)
        w0 = tl.minimum(src_w.to(tl.int32), W - 1)
        h1 = h0 + (h0 < H - 1).to(tl.int32)
        w1 = w0 + (w0 < W - 1).to(tl.int32)
        lh1 = tl.minimum(tl.maximum(src_h - h0.to(tl.float32), 0.0), 1.0)
        lw1 = tl.minimum(tl.maximum(src_w - w0.to(tl.float32), 0.0), 1.0)
        lh0 = 1.0 - lh1
        lw0 = 1.0 - lw1
        r0 = (h0 * W)[:, None]
        r1 = (h1 * W)[:, None]
        v00 = tl.load(x_base + r0 + w0[None, :], mask=mask, other=0.0).to(tl.float32)
        v01 = tl.load(x_base + r0 + w1[None, :], mask=mask, other=0.0).to(tl.float32)
        v10 = tl.load(x_base + r1 + w0[None, :], mask=mask, other=0.0).to(tl.float32)
        v11 = tl.load(x_base + r1 + w1[None, :], mask=mask, other=0.0).to(tl.float32)
        top = lw0[None, :] * v00 + lw1[None, :] * v01
        bot = lw0[None, :] * v10 + lw1[None, :] * v11
        out = lh0[:, None] * top + lh1[:, None] * bot
    else:
        # floor(dst * scale) in float32, as torch computes it (dst * scale is never negative)
        ih = tl.minimum((fh * scale_h).to(tl.int32), H - 1)
        iw = tl.minimum((fw * scale_w).to(tl.int32), W - 1)
        out = tl.load(x_base + (ih * W)[:, None] + iw[None, :], mask=mask, other=0.0)

    tl.store(y_base + (oh * OW)[:, None] + ow[None, :], out.to(y_ptr.dtype.element_ty), mask=mask)


def _per_dim(value, ndim_spatial, what):
    if isinstance(value, (tuple, list)):
        if len(value) != ndim_spatial:
            raise ValueError(f"{what} must have {ndim_spatial} elements")
        return list(value)
    return [value] * ndim_spatial


def _source_scale(in_size, out_size, sf, linear, align_corners):
    """The float scale torch uses to map output to input coordinates along one dimension."""
    if out_size == in_size:
        return 1.0  # torch copies this dimension
    if not linear and out_size == 2 * in_size:
        return 0.5  # torch shifts the index: dst >> 1
    if linear and align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    if sf is not None and sf > 0:
        return 1.0 / sf
    return in_size / out_size


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    if input.dim() != 4:
        raise ValueError("only 4-D (N, C, H, W) inputs are supported")
    if mode not in ("nearest", "bilinear"):
        raise ValueError(f"unsupported mode {mode!r} for a 4-D input")
    sizes = None if size is None else _per_dim(size, 2, "size")
    sfs = None if scale_factor is None else _per_dim(scale_factor, 2, "scale_factor")
    return _interpolate_2d(input, sizes, sfs, mode == "bilinear", align_corners)


def _interpolate_2d(x, sizes, sfs, linear, align_corners):
    if not linear and align_corners is not None:
        raise ValueError("align_corners may only be set for linear interpolating modes")
    if (sizes is None) == (sfs is None):
        raise ValueError("give exactly one of size and scale_factor")
    align = bool(align_corners)
    N, C, H, W = x.shape
    if sizes is not None:
        OH, OW = int(sizes[0]), int(sizes[1])
        sf_h = sf_w = None
    else:
        sf_h, sf_w = sfs
        OH = math.floor(float(H * sf_h))
        OW = math.floor(float(W * sf_w))
    if OH <= 0 or OW <= 0:
        raise ValueError("output size must be positive")
    scale_h = _source_scale(H, OH, sf_h, linear, align)
    scale_w = _source_scale(W, OW, sf_w, linear, align)

    x = x.contiguous()
    y = torch.empty((N, C, OH, OW), dtype=x.dtype, device=x.device)
    planes = N * C
    if planes == 0:
        return y
    BLOCK_W = min(triton.next_power_of_2(OW), 128)
    BLOCK_H = min(max(1, 2048 // BLOCK_W), triton.next_power_of_2(OH))
    num_th = triton.cdiv(OH, BLOCK_H)
    num_tw = triton.cdiv(OW, BLOCK_W)
    grid = (planes * num_th * num_tw,)
    interpolate_kernel[grid](
        x, y, H, W, OH, OW, float(scale_h), float(scale_w), num_th, num_tw,
        BILINEAR=linear, ALIGN=align, BLOCK_H=BLOCK_H, BLOCK_W=BLOCK_W, num_warps=4,
    )
    return y
