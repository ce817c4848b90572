"""2-D convolution (cross-correlation) over NCHW images, with stride, padding, dilation and groups."""

import math

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return torch.nn.functional.conv2d(input, weight, bias, stride, padding, dilation, groups)


# Per size, the cases seeds rotate through: (N, C_in, H, W), (C_out, kH, kW), stride, padding,
# dilation, groups, bias?. The standard size has one configuration, so the timing seeds share it.
SMALL = (((2, 72, 10, 10), (16, 3, 3), 1, 1, 1, 1, True),     # several channel blocks
         ((2, 8, 13, 11), (272, 3, 3), 2, 2, 2, 2, False))    # several output-channel blocks
EDGE = (((1, 3, 7, 10), (5, 3, 2), (2, 1), (1, 0), 1, 1, True),
        ((2, 6, 9, 1), (9, 2, 1), 1, (0, 2), (3, 1), 3, False))
STANDARD = (((32, 128, 56, 56), (256, 3, 3), 1, 1, 1, 1, True),)         # ~59 GFLOP


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    case = cases[seed % len(cases)]
    x_shape, (c_out, kh, kw), stride, padding, dilation, groups, has_bias = case
    c_in_g = x_shape[1] // groups
    x = randn(x_shape, gen, dtype, mode)
    w = randn((c_out, c_in_g, kh, kw), gen, dtype, mode, scale=1.0 / math.sqrt(c_in_g * kh * kw))
    b = randn((c_out,), gen, dtype, "standard", scale=0.5) if has_bias else None
    return Inputs((x, w, b), {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups})


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def cost(inputs):
    x, w, b = inputs.args
    sh, sw = _pair(inputs.kwargs.get("stride", 1))
    ph, pw = _pair(inputs.kwargs.get("padding", 0))
    dh, dw = _pair(inputs.kwargs.get("dilation", 1))
    n, _, h, wd = x.shape
    c_out, c_in_g, kh, kw = w.shape
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out_numel = n * c_out * oh * ow
    flops = 2 * out_numel * c_in_g * kh * kw + (out_numel if b is not None else 0)
    return Cost(flops=flops, bytes=element_bytes(x, w, b) + out_numel * x.element_size())


TASK = Task(
    id="Convolution/conv2d",
    difficulty=4,
    entry="conv2d",
    signature="conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)",
    description=(
        "2-D convolution as torch.nn.functional.conv2d computes it (cross-correlation, the kernel is not "
        "flipped): `input` is (N, C_in, H, W), `weight` is (C_out, C_in/groups, kH, kW), and the optional "
        "`bias` is (C_out,) and is added to every output position of its channel. `stride`, `padding` "
        "(zeros added on both sides) and `dilation` are each an int or an (h, w) pair; `groups` splits the "
        "input and output channels into that many independent convolutions, output channel o reading only "
        "input channels of group o // (C_out/groups). Return a new (N, C_out, OH, OW) tensor in the input's "
        "dtype, OH = (H + 2*padH - dilH*(kH-1) - 1) // strideH + 1 (likewise OW); accumulate in float32 "
        "(TF32 matrix products are acceptable for float32 inputs)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
