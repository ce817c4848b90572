"""2-D convolution over NCHW images, then a pixel shuffle that trades channels for resolution."""

import math
import warnings

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, upscale_factor=2):
    with warnings.catch_warnings():  # 'same' with an odd total padding warns about an internal copy
        warnings.simplefilter("ignore", UserWarning)
        y = torch.nn.functional.conv2d(input, weight, bias=bias, stride=stride, padding=padding,
                                       dilation=dilation, groups=groups)
    return torch.nn.functional.pixel_shuffle(y, upscale_factor)


# Per (size, seed): (N, C_in, H, W), (C_out, kH, kW), stride, padding, dilation, groups, bias?,
# upscale_factor (C_out is a multiple of its square). The standard size has one configuration.
SMALL = (((2, 24, 9, 9), (16, 3, 3), 1, 1, 1, 1, True, 2),
         ((2, 8, 11, 10), (36, 3, 3), 2, 2, 2, 2, False, 3))
EDGE = (((1, 3, 7, 10), (5, 3, 2), (2, 1), (1, 0), 1, 1, True, 1),
        ((2, 6, 9, 1), (12, 2, 1), 1, "same", (3, 1), 3, False, 2))
STANDARD = (((32, 128, 56, 56), (256, 3, 3), 1, 1, 1, 1, True, 2),)  # ~59 GFLOP


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    x_shape, (c_out, kh, kw), stride, padding, dilation, groups, has_bias, factor = cases[seed % len(cases)]
    c_in_g = x_shape[1] // groups
    x = randn(x_shape, gen, dtype, mode)
    w = randn((c_out, c_in_g, kh, kw), gen, dtype, mode, scale=1.0 / math.sqrt(c_in_g * kh * kw))
    b = randn((c_out,), gen, dtype, "standard", scale=0.5) if has_bias else None
    return Inputs((x, w, b), {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups,
                              "upscale_factor": factor})


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def output_hw(x_shape, w_shape, stride, padding, dilation):
    _, _, h, wd = x_shape
    _, _, kh, kw = w_shape
    sh, sw = _pair(stride)
    dh, dw = _pair(dilation)
    if padding == "same":
        return h, wd
    ph, pw = (0, 0) if padding == "valid" else _pair(padding)
    return (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1


def cost(inputs):
    x, w, b = inputs.args
    kw_ = inputs.kwargs
    oh, ow = output_hw(x.shape, w.shape, kw_.get("stride", 1), kw_.get("padding", 0), kw_.get("dilation", 1))
    c_out, c_in_g, kh, kw = w.shape
    out_numel = x.shape[0] * c_out * oh * ow  # the shuffle only moves elements
    flops = 2 * out_numel * c_in_g * kh * kw + (out_numel if b is not None else 0)
    return Cost(flops=flops, bytes=element_bytes(x, w, b) + out_numel * x.element_size())


TASK = Task(
    id="Fusion/fused_pixel_shuffle_conv2d",
    difficulty=4,
    entry="fused_pixel_shuffle_conv2d",
    signature=("fused_pixel_shuffle_conv2d(input: torch.Tensor, weight: torch.Tensor, bias=None, stride=1, "
               "padding=0, dilation=1, groups=1, upscale_factor=2)"),
    description=(
        "2-D cross-correlation as torch.nn.functional.conv2d computes it (`input` (N, C_in, H, W), `weight` "
        "(C_out, C_in/groups, kH, kW), `bias` None or (C_out,), int or (h, w) stride and dilation, padding an int, "
        "a pair, 'valid' or 'same' (extra odd padding at the bottom/right), output channel o reading only the "
        "input channels of group o // (C_out/groups)), giving y of shape (N, C_out, OH, OW); then a pixel shuffle "
        "with r = upscale_factor (C_out divisible by r*r): out[n, c, oh*r + i, ow*r + j] = y[n, c*r*r + i*r + j, "
        "oh, ow], so out is (N, C_out/(r*r), OH*r, OW*r). Return a new tensor in the input's dtype, accumulating "
        "in float32 (TF32 accepted)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
