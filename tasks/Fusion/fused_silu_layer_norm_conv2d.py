"""2-D convolution over NCHW images, layer normalization of each image's whole result, then SiLU."""

import math
import warnings

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(x, weight, conv_weight, conv_bias=None, conv_stride=1, conv_padding=0, conv_dilation=1,
              conv_groups=1, ln_eps=1e-5):
    with warnings.catch_warnings():  # 'same' with an odd total padding warns about an internal copy
        warnings.simplefilter("ignore", UserWarning)
        y = torch.nn.functional.conv2d(x, conv_weight, bias=conv_bias, stride=conv_stride, padding=conv_padding,
                                       dilation=conv_dilation, groups=conv_groups)
    # `weight` takes no part: the normalization over (C_out, OH, OW) has no affine step.
    y = torch.nn.functional.layer_norm(y, y.shape[1:], eps=ln_eps)
    return torch.nn.functional.silu(y)


# Per (size, seed): (N, C_in, H, W), (C_out, kH, kW), stride, padding, dilation, groups, bias?, ln_eps.
# The standard size has one configuration.
SMALL = (((2, 24, 9, 9), (16, 3, 3), 1, 1, 1, 1, True, 1e-5),
         ((3, 8, 11, 10), (40, 3, 3), 2, 2, 2, 2, False, 1e-3))
EDGE = (((1, 3, 7, 10), (5, 3, 2), 2, 1, 1, 1, True, 1e-5),
        ((2, 6, 9, 1), (9, 2, 1), 1, 0, 3, 3, False, 1e-5))
STANDARD = (((32, 128, 56, 56), (256, 3, 3), 1, 1, 1, 1, True, 1e-5),)  # ~59 GFLOP


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    x_shape, (c_out, kh, kw), stride, padding, dilation, groups, has_bias, eps = cases[seed % len(cases)]
    c_in_g = x_shape[1] // groups
    # each image gets its own spread and offset, so per-image statistics matter
    spread = uniform((x_shape[0], 1, 1, 1), gen, torch.float32, 0.5, 2.0)
    offset = torch.randn((x_shape[0], 1, 1, 1), generator=gen) * 0.5
    x = (randn(x_shape, gen, torch.float32, mode) * spread + offset).to(dtype)
    ln_weight = uniform((c_out,), gen, dtype, 0.5, 1.5)
    w = randn((c_out, c_in_g, kh, kw), gen, dtype, mode, scale=1.0 / math.sqrt(c_in_g * kh * kw))
    b = randn((c_out,), gen, dtype, "standard", scale=0.5) if has_bias else None
    return Inputs((x, ln_weight, w, b), {"conv_stride": stride, "conv_padding": padding,
                                         "conv_dilation": dilation, "conv_groups": groups, "ln_eps": eps})


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def cost(inputs):
    x, _, w, b = inputs.args
    sh, sw = _pair(inputs.kwargs.get("conv_stride", 1))
    ph, pw = _pair(inputs.kwargs.get("conv_padding", 0))
    dh, dw = _pair(inputs.kwargs.get("conv_dilation", 1))
    n, _, h, wd = x.shape
    c_out, c_in_g, kh, kw = w.shape
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out_numel = n * c_out * oh * ow
    # the convolution, then statistics, normalization (about 6 flops) and SiLU (about 4) per output
    flops = 2 * out_numel * c_in_g * kh * kw + 10 * out_numel
    return Cost(flops=flops, bytes=element_bytes(x, w, b) + out_numel * x.element_size())


TASK = Task(
    id="Fusion/fused_silu_layer_norm_conv2d",
    difficulty=4,
    entry="fused_silu_layer_norm_conv2d",
    signature=("fused_silu_layer_norm_conv2d(x: torch.Tensor, weight: torch.Tensor, conv_weight: torch.Tensor, "
               "conv_bias: torch.Tensor = None, conv_stride: int = 1, conv_padding: int = 0, conv_dilation: int = 1, "
               "conv_groups: int = 1, ln_eps: float = 1e-5)"),
    description=(
        "Convolve `x` (N, C_in, H, W) with `conv_weight` (C_out, C_in/groups, kH, kW) as "
        "torch.nn.functional.conv2d does (optional `conv_bias` (C_out,), int stride, padding, dilation, groups), "
        "then normalize each image n of the (N, C_out, OH, OW) result over all its C_out * OH * OW values: "
        "(y - mean_n) / sqrt(var_n + ln_eps) with the biased variance and no scale or shift, and finally apply "
        "SiLU, v / (1 + exp(-v)). `weight` (C_out,) is accepted but takes no part in the result. Return a new "
        "tensor of that shape in the input's dtype, accumulating in float32 (TF32 accepted)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
