import torch
import triton
import triton.language as tl

BLOCK = 512  # output positions per program


@triton.jit
def _starts(pos, u, alpha, L, K, M):
    # first input position of each pooling window along one axis
    first = tl.floor((pos.to(tl.float32) + u) * alpha).to(tl.int32) - tl.floor(u * alpha).to(tl.int32)
    return tl.where(pos == M - 1, L - K, first)


@triton.jit
def frac_max_pool_relu_kernel(x_ptr, s_ptr, y_ptr, i_ptr, total, H, W, OH, OW, alpha_h, alpha_w,
                              KH: tl.constexpr, KW: tl.constexpr, WITH_INDEX: tl.constexpr,
                              BLOCK: tl.constexpr):
    # one output position per lane, over all planes: the window from the plane's two samples, then
    # the first maximum of relu(x) over it
    out = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    p_ok = out < total
    plane = out // (OH * OW)
    p = (out % (OH * OW)).to(tl.int32)
    oh = p // OW
    ow = p % OW
    u_w = tl.load(s_ptr + plane * 2, mask=p_ok, other=0.0).to(tl.float32)
    u_h = tl.load(s_ptr + plane * 2 + 1, mask=p_ok, other=0.0).to(tl.float32)
    h0 = _starts(oh, u_h, alpha_h, H, KH, OH)
    w0 = _starts(ow, u_w, alpha_w, W, KW, OW)
    x_plane = x_ptr + plane * H * W
    best = tl.full((BLOCK,), -1.0, dtype=tl.float32)  # relu outputs are >= 0: the first element wins
    best_idx = tl.zeros((BLOCK,), dtype=tl.int32)
    for kh in tl.static_range(KH):
        for kw in tl.static_range(KW):
            idx = (h0 + kh) * W + (w0 + kw)
            v = tl.load(x_plane + idx, mask=p_ok, other=0.0).to(tl.float32)
            v = tl.maximum(v, 0.0)
            better = v > best
            best = tl.where(better, v, best)
            best_idx = tl.where(better, idx, best_idx)
    tl.store(y_ptr + out, best.to(y_ptr.dtype.element_ty), mask=p_ok)
    if WITH_INDEX:
        tl.store(i_ptr + out, best_idx.to(tl.int64), mask=p_ok)


def _pair(v):
    return (int(v[0]), int(v[1])) if isinstance(v, (tuple, list)) else (int(v), int(v))


def fused_fractional_max_pool2d_with_relu(input: torch.Tensor, kernel_size, output_size=None, output_ratio=None,
                                          return_indices=False, _random_samples=None):
    if _random_samples is None:
        raise ValueError("this kernel needs _random_samples: the pooling regions are given, not drawn")
    if input.dim() not in (3, 4):
        raise ValueError("expected a 3-D or 4-D input")
    kh, kw = _pair(kernel_size)
    H, W = input.shape[-2], input.shape[-1]
    if output_size is not None:
        oh, ow = _pair(output_size)
    elif output_ratio is not None:
        rh, rw = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio, output_ratio)
        oh, ow = int(H * rh), int(W * rw)
    else:
        raise ValueError("fractional_max_pool2d requires output_size or output_ratio")
    if oh + kh - 1 > H or ow + kw - 1 > W:
        raise ValueError("output size too large for the kernel size and input size")
    x = input.contiguous()
    planes = x.numel() // max(1, H * W)
    samples = _random_samples.contiguous()
    out_shape = tuple(input.shape[:-2]) + (oh, ow)
    y = torch.empty(out_shape, dtype=input.dtype, device=input.device)
    idx = torch.empty(out_shape, dtype=torch.int64, device=input.device) if return_indices else y
    if y.numel():
        alpha_h = (H - kh) / (oh - 1) if oh > 1 else 0.0
        alpha_w = (W - kw) / (ow - 1) if ow > 1 else 0.0
        total = planes * oh * ow
        frac_max_pool_relu_kernel[(triton.cdiv(total, BLOCK),)](x, samples, y, idx, total, H, W, oh, ow,
                                                               alpha_h, alpha_w,
                                        KH=kh, KW=kw, WITH_INDEX=bool(return_indices), BLOCK=BLOCK, num_warps=4)
    if return_indices:
        return y, idx
    return y
