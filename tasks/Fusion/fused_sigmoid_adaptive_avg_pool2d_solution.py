import torch
import triton
import triton.language as tl


@triton.jit
def adaptive_avg_pool2d_sigmoid_kernel(x_ptr, y_ptr, total, H, W, OH, OW,
                               KH_MAX: tl.constexpr, BLOCK_KW: tl.constexpr, BLOCK: tl.constexpr):
    # one lane per output element of the flattened (planes, OH, OW) output; the window's columns
    # are a second tile dimension and its rows a loop; the sigmoid is applied to the average
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    ow = offs % OW
    oh = (offs // OW) % OH
    plane = offs // (OW * OH)
    h0 = (oh * H) // OH
    h1 = ((oh + 1) * H + OH - 1) // OH
    w0 = (ow * W) // OW
    w1 = ((ow + 1) * W + OW - 1) // OW
    cols = tl.arange(0, BLOCK_KW)
    iw = w0[:, None] + cols[None, :]
    col_ok = mask[:, None] & (iw < w1[:, None])
    base = x_ptr + plane * H * W
    acc = tl.zeros((BLOCK, BLOCK_KW), dtype=tl.float32)
    for kh in range(KH_MAX):
        ih = h0 + kh
        ok = col_ok & (ih < h1)[:, None]
        v = tl.load(base[:, None] + ih[:, None] * W + iw, mask=ok, other=0.0)
        acc += v.to(tl.float32)
    count = ((h1 - h0) * (w1 - w0)).to(tl.float32)
    y = tl.sigmoid(tl.sum(acc, axis=1) / count)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def _largest_window(size, out):
    return max(((i + 1) * size + out - 1) // out - (i * size) // out for i in range(out))


def fused_sigmoid_adaptive_avg_pool2d(input, output_size):
    if input.dim() not in (3, 4):
        raise ValueError("input must be (N, C, H, W) or (C, H, W)")
    h, w = input.shape[-2], input.shape[-1]
    oh, ow = output_size if isinstance(output_size, (tuple, list)) else (output_size, output_size)
    oh = h if oh is None else int(oh)
    ow = w if ow is None else int(ow)
    x = input.contiguous()
    y = torch.empty(tuple(input.shape[:-2]) + (oh, ow), device=input.device, dtype=input.dtype)
    total = y.numel()
    if total == 0:
        return y
    kh_max = _largest_window(h, oh)
    block_kw = triton.next_power_of_2(_largest_window(w, ow))
    block = max(16, min(1024, 4096 // block_kw))
    adaptive_avg_pool2d_sigmoid_kernel[(triton.cdiv(total, block),)](x, y, total, h, w, oh, ow, KH_MAX=kh_max,
                                                             BLOCK_KW=block_kw, BLOCK=block, num_warps=4)
    return y
