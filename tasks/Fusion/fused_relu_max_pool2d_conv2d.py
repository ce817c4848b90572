"""2-D convolution over NCHW images, 2-D max pooling of the result, then ReLU."""

import math
import warnings

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, weight, bias=None, conv_stride=1, conv_padding=0, conv_dilation=1, conv_groups=1,
              pool_kernel_size=2, pool_stride=None, pool_padding=0, pool_dilation=1, pool_ceil_mode=False,
              inplace=False):
    with warnings.catch_warnings():  # 'same' with an odd total padding warns about an internal copy
        warnings.simplefilter("ignore", UserWarning)
        y = torch.nn.functional.conv2d(input, weight, bias=bias, stride=conv_stride, padding=conv_padding,
                                       dilation=conv_dilation, groups=conv_groups)
    p = torch.nn.functional.max_pool2d(y, kernel_size=pool_kernel_size, stride=pool_stride, padding=pool_padding,
                                       dilation=pool_dilation, ceil_mode=pool_ceil_mode)
    return torch.nn.functional.relu(p, inplace=inplace)


# Per (size, seed): (N, C_in, H, W), (C_out, kH, kW), conv stride, padding, dilation, groups, bias?,
# then pool kernel_size, stride, padding, dilation, ceil_mode. The standard size has one configuration.
SMALL = (((2, 24, 9, 9), (16, 3, 3), 1, 1, 1, 1, True, 2, None, 0, 1, False),
         ((2, 8, 11, 10), (40, 3, 3), 2, 2, 2, 2, False, 3, 2, 1, 1, True))
EDGE = (((1, 3, 7, 10), (5, 3, 2), (2, 1), (1, 0), 1, 1, True, (2, 3), (1, 2), (0, 1), (2, 1), False),
        ((2, 6, 9, 1), (9, 2, 1), 1, "same", (3, 1), 3, False, (3, 1), None, (1, 0), 1, True))
STANDARD = (((32, 128, 56, 56), (256, 3, 3), 1, 1, 1, 1, True, 3, 2, 1, 1, False),)  # ~59 GFLOP


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    case = cases[seed % len(cases)]
    x_shape, (c_out, kh, kw), stride, padding, dilation, groups, has_bias = case[:7]
    pool_k, pool_s, pool_p, pool_d, ceil_mode = case[7:]
    c_in_g = x_shape[1] // groups
    x = randn(x_shape, gen, dtype, mode)
    w = randn((c_out, c_in_g, kh, kw), gen, dtype, mode, scale=1.0 / math.sqrt(c_in_g * kh * kw))
    b = randn((c_out,), gen, dtype, "standard", scale=0.5) if has_bias else None
    kwargs = {"conv_stride": stride, "conv_padding": padding, "conv_dilation": dilation, "conv_groups": groups,
              "pool_kernel_size": pool_k, "pool_stride": pool_s, "pool_padding": pool_p, "pool_dilation": pool_d,
              "pool_ceil_mode": ceil_mode, "inplace": False}
    return Inputs((x, w, b), kwargs)


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def conv_hw(x_shape, w_shape, stride, padding, dilation):
    _, _, h, wd = x_shape
    _, _, kh, kw = w_shape
    sh, sw = _pair(stride)
    dh, dw = _pair(dilation)
    if padding == "same":
        return h, wd
    ph, pw = (0, 0) if padding == "valid" else _pair(padding)
    return (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1


def pool_len(size, k, s, p, d, ceil_mode):
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:  # the last window must start inside the input or left padding
        out -= 1
    return out


def cost(inputs):
    x, w, b = inputs.args
    kw_ = inputs.kwargs
    oh, ow = conv_hw(x.shape, w.shape, kw_.get("conv_stride", 1), kw_.get("conv_padding", 0),
                     kw_.get("conv_dilation", 1))
    kh_p, kw_p = _pair(kw_.get("pool_kernel_size", 2))
    stride = kw_.get("pool_stride")
    sh_p, sw_p = _pair(stride) if stride is not None else (kh_p, kw_p)
    ph_p, pw_p = _pair(kw_.get("pool_padding", 0))
    dh_p, dw_p = _pair(kw_.get("pool_dilation", 1))
    ceil_mode = kw_.get("pool_ceil_mode", False)
    ph = pool_len(oh, kh_p, sh_p, ph_p, dh_p, ceil_mode)
    pw = pool_len(ow, kw_p, sw_p, pw_p, dw_p, ceil_mode)
    c_out, c_in_g, kh, kw = w.shape
    conv_numel = x.shape[0] * c_out * oh * ow
    out_numel = x.shape[0] * c_out * ph * pw
    flops = 2 * conv_numel * c_in_g * kh * kw + out_numel * kh_p * kw_p
    return Cost(flops=flops, bytes=element_bytes(x, w, b) + out_numel * x.element_size())


TASK = Task(
    id="Fusion/fused_relu_max_pool2d_conv2d",
    difficulty=4,
    entry="fused_relu_max_pool2d_conv2d",
    signature=("fused_relu_max_pool2d_conv2d(input, weight, bias=None, conv_stride=1, conv_padding=0, "
               "conv_dilation=1, conv_groups=1, pool_kernel_size=2, pool_stride=None, pool_padding=0, "
               "pool_dilation=1, pool_ceil_mode=False, inplace=False)"),
    description=(
        "Convolve as torch.nn.functional.conv2d does (`input` (N, C_in, H, W), `weight` (C_out, C_in/groups, kH, "
        "kW), `bias` None or (C_out,), conv_stride and conv_dilation ints or (h, w) pairs, conv_padding an int, a "
        "pair, 'valid' or 'same', conv_groups), max-pool the (N, C_out, OH, OW) result as "
        "torch.nn.functional.max_pool2d does, then clamp at 0. Pool options are ints or pairs: the window is "
        "pool_kernel_size, pool_stride None means the window size, pool_padding pads with -inf, pool_dilation "
        "spaces the window taps, and the pooled length is floor((L + 2p - d*(k-1) - 1) / s) + 1, with ceil "
        "instead of floor when pool_ceil_mode is set, less one if that last window would start at or after L + p. "
        "Return a new tensor in the input's dtype, accumulating in float32 (TF32 accepted); `inplace` changes "
        "nothing observable."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
