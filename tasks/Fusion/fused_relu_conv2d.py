"""2-D convolution over NCHW images, then ReLU."""

import math
import warnings

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, inplace=False):
    with warnings.catch_warnings():  # 'same' with an odd total padding warns about an internal copy
        warnings.simplefilter("ignore", UserWarning)
        y = torch.nn.functional.conv2d(input, weight, bias=bias, stride=stride, padding=padding,
                                       dilation=dilation, groups=groups)
    return torch.nn.functional.relu(y, inplace=inplace)


# Per (size, seed): (N, C_in, H, W), (C_out, kH, kW), stride, padding, dilation, groups, bias?, inplace.
# The standard size has one configuration.
SMALL = (((2, 24, 9, 9), (16, 3, 3), 1, 1, 1, 1, True, False),
         ((2, 8, 11, 10), (40, 3, 3), 2, 2, 2, 2, False, True))
EDGE = (((1, 3, 7, 10), (5, 3, 2), (2, 1), (1, 0), 1, 1, True, True),
        ((2, 6, 9, 1), (9, 2, 1), 1, "same", (3, 1), 3, False, False))
STANDARD = (((32, 128, 56, 56), (256, 3, 3), 1, 1, 1, 1, True, False),)  # ~59 GFLOP


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    x_shape, (c_out, kh, kw), stride, padding, dilation, groups, has_bias, inplace = cases[seed % len(cases)]
    c_in_g = x_shape[1] // groups
    x = randn(x_shape, gen, dtype, mode)
    w = randn((c_out, c_in_g, kh, kw), gen, dtype, mode, scale=1.0 / math.sqrt(c_in_g * kh * kw))
    b = randn((c_out,), gen, dtype, "standard", scale=0.5) if has_bias else None
    return Inputs((x, w, b), {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups,
                              "inplace": inplace})


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
    out_numel = x.shape[0] * c_out * oh * ow
    flops = 2 * out_numel * c_in_g * kh * kw + out_numel
    return Cost(flops=flops, bytes=element_bytes(x, w, b) + out_numel * x.element_size())


TASK = Task(
    id="Fusion/fused_relu_conv2d",
    difficulty=4,
    entry="fused_relu_conv2d",
    signature="fused_relu_conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, inplace=False)",
    description=(
        "2-D cross-correlation as torch.nn.functional.conv2d computes it, followed by max(y, 0) on every output "
        "element. `input` is (N, C_in, H, W), `weight` (C_out, C_in/groups, kH, kW) and `bias` None or (C_out,); "
        "output channel o reads only the input channels of its group o // (C_out/groups). `stride` and "
        "`dilation` are ints or (h, w) pairs; `padding` is an int, a pair, 'valid' (none) or 'same' (output "
        "H x W at stride 1, an odd total padding putting the extra row/column at the bottom/right). Return a "
        "new (N, C_out, OH, OW) tensor in the input's dtype, accumulating in float32 (TF32 accepted); "
        "`inplace` only concerns the intermediate and leaves the inputs untouched."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
