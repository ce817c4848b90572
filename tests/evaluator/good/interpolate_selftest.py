# task: SpatialOps/interpolate
# style: __main__ self-test, typing hints, tl.program_id(axis=1) for the pixel block, constexpr mode flags, triton.cdiv
import math
from typing import Optional, Sequence, Tuple, Union

import torch
import triton
import triton.language as tl


@triton.jit
def _src_linear(dst, in_size, scale, SAME: tl.constexpr, ALIGN: tl.constexpr):
    # torch's area_pixel_compute_source_index + guard_index_and_lambda, in float32
    d = dst.to(tl.float32)
    if SAME:
        i0 = dst
        lam = tl.zeros_like(d)
    else:
        if ALIGN:
            src = scale * d
        else:
            src = tl.maximum(scale * (d + 0.5) - 0.5, 0.0)
        i0 = tl.minimum(tl.floor(src).to(tl.int32), in_size - 1)
        lam = tl.minimum(tl.maximum(src - i0.to(tl.float32), 0.0), 1.0)
    i1 = tl.minimum(i0 + 1, in_size - 1)
    return i0, i1, lam


@triton.jit
def _src_nearest(dst, in_size, out_size, scale, SAME: tl.constexpr):
    if SAME:
        idx = dst
    else:
        if out_size == 2 * in_size:
            idx = dst // 2
        else:
            idx = tl.minimum(tl.floor(dst.to(tl.float32) * scale).to(tl.int32), in_size - 1)
    return idx


@triton.jit
def resize2d_kernel(x_ptr, y_ptr, C, H, W, OH, OW,
                    sxn, sxc, sxh, sxw,
                    scale_h, scale_w,
                    BILINEAR: tl.constexpr, ALIGN: tl.constexpr, SAME_H: tl.constexpr, SAME_W: tl.constexpr,
                    BLOCK: tl.constexpr):
    plane = tl.program_id(axis=0)           # n * C + c
    pix = tl.program_id(axis=1) * BLOCK + tl.arange(0, BLOCK)
    live = pix < OH * OW
    oh = pix // OW
    ow = pix % OW
    n = plane // C
    c = plane % C
    base = x_ptr + n.to(tl.int64) * sxn + c.to(tl.int64) * sxc

    if BILINEAR:
        h0, h1, lh = _src_linear(oh, H, scale_h, SAME_H, ALIGN)
        w0, w1, lw = _src_linear(ow, W, scale_w, SAME_W, ALIGN)
        v00 = tl.load(base + h0 * sxh + w0 * sxw, mask=live, other=0.0).to(tl.float32)
        v01 = tl.load(base + h0 * sxh + w1 * sxw, mask=live, other=0.0).to(tl.float32)
        v10 = tl.load(base + h1 * sxh + w0 * sxw, mask=live, other=0.0).to(tl.float32)
        v11 = tl.load(base + h1 * sxh + w1 * sxw, mask=live, other=0.0).to(tl.float32)
        top = (1.0 - lw) * v00 + lw * v01
        bot = (1.0 - lw) * v10 + lw * v11
        val = (1.0 - lh) * top + lh * bot
    else:
        hs = _src_nearest(oh, H, OH, scale_h, SAME_H)
        ws = _src_nearest(ow, W, OW, scale_w, SAME_W)
        val = tl.load(base + hs * sxh + ws * sxw, mask=live, other=0.0)

    out = y_ptr + plane.to(tl.int64) * OH * OW + pix
    tl.store(out, val.to(y_ptr.dtype.element_ty), mask=live)


def _as_pair(v) -> Tuple:
    return (v[0], v[1]) if isinstance(v, (tuple, list)) else (v, v)


def _scale(in_size: int, out_size: int, factor: Optional[float], align: bool) -> float:
    if align:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    if factor is not None and factor > 0:
        return 1.0 / factor
    return in_size / out_size


def interpolate(input: torch.Tensor, size: Union[int, Sequence[int], None] = None,
                scale_factor: Union[float, Sequence[float], None] = None, mode: str = "nearest",
                align_corners: Optional[bool] = None) -> torch.Tensor:
    assert input.dim() == 4, f"expected (N, C, H, W), got {tuple(input.shape)}"
    assert mode in ("nearest", "bilinear"), f"mode {mode!r} is not supported"
    assert (size is None) != (scale_factor is None), "give exactly one of size and scale_factor"
    N, C, H, W = input.shape
    if size is not None:
        OH, OW = _as_pair(size)
        fh = fw = None
    else:
        fh, fw = _as_pair(scale_factor)
        OH, OW = math.floor(H * fh), math.floor(W * fw)
    align = bool(align_corners) and mode == "bilinear"

    y = torch.empty((N, C, OH, OW), device=input.device, dtype=input.dtype)
    if y.numel() == 0:
        return y
    BLOCK = 256
    grid = (N * C, triton.cdiv(OH * OW, BLOCK))
    resize2d_kernel[grid](
        input, y, C, H, W, OH, OW, *input.stride(),
        _scale(H, OH, fh, align), _scale(W, OW, fw, align),
        BILINEAR=mode == "bilinear", ALIGN=align, SAME_H=OH == H, SAME_W=OW == W,
        BLOCK=BLOCK,
    )
    return y


if __name__ == "__main__":
    import torch.nn.functional as F

    torch.manual_seed(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    checks = [
        ((2, 3, 10, 12), dict(scale_factor=(1.75, 0.8), mode="bilinear", align_corners=False)),
        ((2, 3, 11, 8), dict(scale_factor=(1.45, 0.6), mode="nearest")),
        ((1, 2, 5, 7), dict(size=(1, 13), mode="bilinear", align_corners=True)),
        ((3, 1, 7, 4), dict(size=(5, 13), mode="nearest")),
        ((2, 4, 16, 16), dict(scale_factor=2.0, mode="bilinear", align_corners=False)),
        ((2, 4, 9, 9), dict(size=(18, 9), mode="nearest")),
    ]
    for shape, kw in checks:
        x = torch.randn(shape, device=dev)
        got = interpolate(x, **kw)
        ref = F.interpolate(x, **kw)
        print(shape, kw, "max err", (got - ref).abs().max().item())
