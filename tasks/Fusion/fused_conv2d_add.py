"""2-D convolution followed by adding a scaled tensor or number."""

import math

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, weight, bias=None, other=None, stride=1, padding=0, dilation=1, groups=1, alpha=1, out=None):
    result = torch.nn.functional.conv2d(input, weight, bias, stride, padding, dilation, groups)
    if other is not None:
        result = torch.add(result, other, alpha=alpha)
    if out is not None:
        out.copy_(result)
        return out
    return result


# Per size, the cases seeds rotate through: (N, C_in, H, W), (C_out, kH, kW), stride, padding,
# dilation, groups, bias?, other ("full": the output's shape, "channel": (C_out, 1, 1), a number, or
# None), alpha. The standard size has one configuration, so the timing seeds share it.
SMALL = (((2, 40, 10, 10), (16, 3, 3), 1, 1, 1, 1, True, "full", 1),
         ((2, 8, 13, 11), (48, 3, 3), 2, 2, 2, 2, False, "channel", -0.5))
EDGE = (((1, 3, 7, 10), (5, 3, 2), (2, 1), (1, 0), 1, 1, True, 0.25, 2),
        ((2, 6, 9, 1), (9, 2, 1), 1, "same", (3, 1), 3, False, None, 1))
STANDARD = (((32, 128, 56, 56), (256, 3, 3), 1, 1, 1, 1, True, "full", 1),)   # ~59 GFLOP


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _out_hw(h, w, kh, kw, stride, padding, dilation):
    if padding == "same":
        return h, w
    sh, sw = _pair(stride)
    ph, pw = (0, 0) if padding == "valid" else _pair(padding)
    dh, dw = _pair(dilation)
    return (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    x_shape, (c_out, kh, kw), stride, padding, dilation, groups, has_bias, other, alpha = cases[seed % len(cases)]
    c_in_g = x_shape[1] // groups
    x = randn(x_shape, gen, dtype, mode)
    w = randn((c_out, c_in_g, kh, kw), gen, dtype, mode, scale=1.0 / math.sqrt(c_in_g * kh * kw))
    b = randn((c_out,), gen, dtype, "standard", scale=0.5) if has_bias else None
    oh, ow = _out_hw(x_shape[2], x_shape[3], kh, kw, stride, padding, dilation)
    if other == "full":
        other = randn((x_shape[0], c_out, oh, ow), gen, dtype, mode)
    elif other == "channel":
        other = randn((c_out, 1, 1), gen, dtype, mode)
    return Inputs((x, w, b, other), {"stride": stride, "padding": padding, "dilation": dilation,
                                     "groups": groups, "alpha": alpha})


def cost(inputs):
    x, w, b, other = inputs.args
    kw_ = inputs.kwargs
    n, _, h, wd = x.shape
    c_out, c_in_g, kh, kw = w.shape
    oh, ow = _out_hw(h, wd, kh, kw, kw_.get("stride", 1), kw_.get("padding", 0), kw_.get("dilation", 1))
    out_numel = n * c_out * oh * ow
    flops = 2 * out_numel * c_in_g * kh * kw + 2 * out_numel
    return Cost(flops=flops, bytes=element_bytes(x, w, b, other) + out_numel * x.element_size())


TASK = Task(
    id="Fusion/fused_conv2d_add",
    difficulty=4,
    entry="fused_conv2d_add",
    signature=("fused_conv2d_add(input, weight, bias=None, other=None, stride=1, padding=0, dilation=1, groups=1, "
               "alpha=1, out=None)"),
    description=(
        "Compute y = conv2d(input, weight, bias, stride, padding, dilation, groups) as torch.nn.functional.conv2d "
        "does (cross-correlation; `input` (N, C_in, H, W), `weight` (C_out, C_in/groups, kH, kW), optional `bias` "
        "(C_out,); stride and dilation are ints or (h, w) pairs; padding is an int, an (h, w) pair, 'valid' (none) "
        "or 'same' (stride 1, output as large as the input, an odd total padding putting the extra row or column "
        "at the bottom or right); groups split the channels into independent convolutions). Then return "
        "y + alpha * other, where `other` is None (return y), a Python number, or a tensor of the input's dtype "
        "that broadcasts to y's shape (N, C_out, OH, OW), e.g. a per-channel (C_out, 1, 1) tensor. The result has "
        "the input's dtype; accumulate in float32 (TF32 matrix products are acceptable for float32 inputs)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
