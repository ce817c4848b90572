"""2-D transposed convolution (the adjoint of conv2d) with stride, padding, output padding, groups and dilation."""

import math

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return torch.nn.functional.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                                                dilation)


# Per size, the cases seeds rotate through: (N, C_in, H, W), (C_out/groups, kH, kW), stride, padding,
# output_padding, groups, dilation, bias?. The standard size has one configuration.
SMALL = (((2, 24, 7, 9), (8, 3, 3), 2, 1, 1, 1, 1, True),
         ((2, 12, 6, 5), (5, 3, 2), (1, 2), (0, 1), (1, 0), 2, (2, 1), False))
EDGE = (((1, 3, 1, 4), (2, 2, 3), (3, 1), 0, (2, 0), 1, 1, True),   # stride above the kernel height
        ((3, 5, 5, 1), (1, 1, 3), 1, (0, 1), 0, 5, (1, 2), False))     # depthwise, width 1, dilated
STANDARD = (((16, 256, 64, 64), (128, 4, 4), 2, 1, 0, 1, 1, True),)  # 64x64 -> 128x128, ~69 GFLOP


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    x_shape, (c_out_g, kh, kw), stride, padding, output_padding, groups, dilation, has_bias = cases[seed % len(cases)]
    c_in = x_shape[1]
    x = randn(x_shape, gen, dtype, mode)
    w = randn((c_in, c_out_g, kh, kw), gen, dtype, mode, scale=1.0 / math.sqrt(c_in // groups * kh * kw))
    b = randn((c_out_g * groups,), gen, dtype, "standard", scale=0.5) if has_bias else None
    return Inputs((x, w, b), {"stride": stride, "padding": padding, "output_padding": output_padding,
                              "groups": groups, "dilation": dilation})


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _taps(size_in, size_out, k, s, p, d):
    """How many (input position, kernel tap) pairs land inside the output along one dimension."""
    return sum(1 for i in range(size_in) for t in range(k) if 0 <= i * s - p + t * d < size_out)


def cost(inputs):
    x, w, b = inputs.args
    kw_ = inputs.kwargs
    sh, sw = _pair(kw_.get("stride", 1))
    ph, pw = _pair(kw_.get("padding", 0))
    oph, opw = _pair(kw_.get("output_padding", 0))
    dh, dw = _pair(kw_.get("dilation", 1))
    groups = kw_.get("groups", 1)
    n, c_in, h, wd = x.shape
    _, c_out_g, kh, kw = w.shape
    oh = (h - 1) * sh - 2 * ph + dh * (kh - 1) + oph + 1
    ow = (wd - 1) * sw - 2 * pw + dw * (kw - 1) + opw + 1
    out_numel = n * c_out_g * groups * oh * ow
    macs = n * c_in * c_out_g * _taps(h, oh, kh, sh, ph, dh) * _taps(wd, ow, kw, sw, pw, dw)
    return Cost(flops=2 * macs + (out_numel if b is not None else 0),
                bytes=element_bytes(x, w, b) + out_numel * x.element_size())


TASK = Task(
    id="Convolution/conv_transpose2d",
    difficulty=4,
    entry="conv_transpose2d",
    signature=("conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, "
               "dilation=1)"),
    description=(
        "Transposed 2-D convolution as torch.nn.functional.conv_transpose2d: `input` is (N, C_in, H, W), `weight` "
        "is (C_in, C_out/groups, kH, kW) and the optional `bias` (C_out,) is added per output channel. Each input "
        "pixel (ih, iw) of channel ci scatters ci's weights into the output at oh = ih*strideH - padH + kh*dilH "
        "(likewise ow), within group ci // (C_in/groups), which owns output channels g*C_out/groups onwards; "
        "contributions landing outside the output are dropped. OH = (H-1)*strideH - 2*padH + dilH*(kH-1) + "
        "output_paddingH + 1 (likewise OW); stride, padding, output_padding and dilation are ints or (h, w) pairs. "
        "Return a new (N, C_out, OH, OW) tensor in the input's dtype, accumulating in float32 (TF32 products are "
        "acceptable for float32)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
