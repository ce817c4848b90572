"""2-D convolution, SELU, then instance normalization of every (image, channel) plane."""

import math

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, num_features=None, eps=1e-5,
              momentum=0.1, affine=False, track_running_stats=False):
    if num_features is not None and num_features != weight.shape[0]:
        raise ValueError(f"num_features ({num_features}) must equal the convolution's out_channels")
    y = torch.nn.functional.conv2d(input, weight, bias, stride, padding, dilation, groups)
    s = torch.nn.functional.selu(y)
    # A freshly built InstanceNorm2d has weight ones and bias zeros (affine=True) and normalizes with
    # the statistics of each plane in training mode whether or not it tracks running statistics, so
    # num_features, momentum, affine and track_running_stats do not change the values.
    return torch.nn.functional.instance_norm(s, eps=eps)


# Per (size, seed): (N, C_in, H, W), (C_out, kH, kW), stride, padding, dilation, groups, bias?, eps,
# affine, num_features?. The standard size has one configuration.
SMALL = (((2, 24, 9, 9), (16, 3, 3), 1, 1, 1, 1, True, 1e-5, False, False),
         ((2, 8, 11, 10), (40, 3, 3), 2, 2, 2, 2, False, 1e-3, True, True))
EDGE = (((1, 3, 7, 10), (5, 3, 2), (2, 1), (1, 0), 1, 1, True, 1e-5, False, True),
        ((2, 6, 9, 1), (9, 2, 1), 1, (0, 2), (3, 1), 3, False, 1e-5, True, False))
STANDARD = (((32, 128, 56, 56), (256, 3, 3), 1, 1, 1, 1, True, 1e-5, False, False),)  # ~59 GFLOP


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    x_shape, (c_out, kh, kw), stride, padding, dilation, groups, has_bias, eps, affine, named = cases[seed % len(cases)]
    c_in_g = x_shape[1] // groups
    x = randn(x_shape, gen, dtype, mode)
    w = randn((c_out, c_in_g, kh, kw), gen, dtype, mode, scale=1.0 / math.sqrt(c_in_g * kh * kw))
    b = randn((c_out,), gen, dtype, "standard", scale=0.5) if has_bias else None
    kwargs = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups,
              "num_features": c_out if named else None, "eps": eps, "momentum": 0.1, "affine": affine,
              "track_running_stats": False}
    return Inputs((x, w, b), kwargs)


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
    # the convolution, SELU (about 5 flops) and the normalization (about 6 flops) per output
    flops = 2 * out_numel * c_in_g * kh * kw + 11 * out_numel
    return Cost(flops=flops, bytes=element_bytes(x, w, b) + out_numel * x.element_size())


TASK = Task(
    id="Fusion/fused_instance_norm_selu_conv2d",
    difficulty=4,
    entry="fused_instance_norm_selu_conv2d",
    signature=("fused_instance_norm_selu_conv2d(input: Tensor, weight: Tensor, bias=None, stride=1, padding=0, "
               "dilation=1, groups=1, num_features=None, eps=1e-5, momentum=0.1, affine=False, "
               "track_running_stats=False)"),
    description=(
        "Convolve as torch.nn.functional.conv2d does (`input` (N, C_in, H, W), `weight` (C_out, C_in/groups, kH, "
        "kW), optional `bias` (C_out,), int or pair stride/padding/dilation, groups), apply SELU "
        "(1.0507009873554805 * (x if x > 0 else 1.6732632423543772 * (exp(x) - 1))), then normalize every "
        "(n, c) plane of the (N, C_out, OH, OW) result over its OH * OW positions: (s - mean) / sqrt(var + eps) "
        "with the biased variance. num_features (None or C_out), momentum, affine (a fresh affine scale is 1, "
        "shift 0) and track_running_stats (planes use their own statistics) leave the values unchanged. Return "
        "a new tensor in the input's dtype; accumulate in float32 (TF32 accepted for float32 inputs)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
