"""2-D convolution, batch normalization with batch statistics, ReLU, then dropout; judged statistically."""

import math
from dataclasses import dataclass

import torch

from evaluator.contracts import Statistical
from evaluator.randomness import dropout_checks
from evaluator.task import Allowance, Cost, Inputs, Task, element_bytes, generator, pick, randn


@dataclass(frozen=True)
class StatisticalTF32(Statistical):
    """A Statistical contract whose float32 products may run as TF32: the roofline floor uses the TF32
    peak (as for Tolerance(tf32=True)), so a TF32 kernel is not rejected as impossibly fast."""

    tf32: bool = True


def _conv_bn_relu(input, weight, bias, stride, padding, dilation, groups):
    y = torch.nn.functional.conv2d(input, weight, bias, stride, padding, dilation, groups)
    # No running statistics exist, so batch normalization always uses the batch's own statistics
    # (torch refuses eval mode without running buffers); `training` only switches dropout.
    y = torch.nn.functional.batch_norm(y, None, None, training=True)
    return torch.nn.functional.relu(y)


def reference(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, p=0.5, training=True,
              inplace=False):
    y = _conv_bn_relu(input, weight, bias, stride, padding, dilation, groups)
    return torch.nn.functional.dropout(y, p=p, training=training, inplace=False)


# Per (size, seed): (N, C_in, H, W), (C_out, kH, kW), stride, padding, dilation, groups, bias?, p,
# training. The standard size has one configuration.
SMALL = (((2, 24, 9, 9), (16, 3, 3), 1, 1, 1, 1, True, 0.5, True),
         ((2, 8, 11, 10), (40, 3, 3), 2, 2, 2, 2, False, 0.3, False))
EDGE = (((1, 3, 7, 10), (5, 3, 2), (2, 1), (1, 0), 1, 1, True, 0.2, True),
        ((2, 6, 9, 1), (9, 2, 1), 1, (0, 2), (3, 1), 3, False, 0.5, True))
STANDARD = (((32, 128, 56, 56), (256, 3, 3), 1, 1, 1, 1, True, 0.2, True),)  # ~59 GFLOP

# Kept elements must match (no-dropout value) / (1 - p) within eps * (|kept| + rms(kept)): the output's
# rounding (and a rounded convolution result) for half precision, TF32 products for float32.
EPS = {torch.float32: 5e-3, torch.float16: 4e-3, torch.bfloat16: 2e-2}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    x_shape, (c_out, kh, kw), stride, padding, dilation, groups, has_bias, p, training = cases[seed % len(cases)]
    c_in_g = x_shape[1] // groups
    x = randn(x_shape, gen, dtype, mode)
    w = randn((c_out, c_in_g, kh, kw), gen, dtype, mode, scale=1.0 / math.sqrt(c_in_g * kh * kw))
    b = randn((c_out,), gen, dtype, "standard", scale=0.5) if has_bias else None
    kwargs = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups, "p": p,
              "training": training, "inplace": False}
    return Inputs((x, w, b), kwargs)


def check(inputs, runs):
    x, w, b = inputs.args
    kw = inputs.kwargs
    p, training = kw.get("p", 0.5), kw.get("training", True)
    device = runs[0].device
    wide = [t.to(device, torch.float64) if t is not None else None for t in (x, w, b)]
    y = _conv_bn_relu(*wide, kw.get("stride", 1), kw.get("padding", 0), kw.get("dilation", 1), kw.get("groups", 1))
    kept = y / (1.0 - p) if training else y
    return dropout_checks(runs, kept, p if training else 0.0, EPS[x.dtype], what="batch norm + relu + dropout")


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
    # the convolution, then statistics, normalization, ReLU and dropout (about 8 flops) per output
    flops = 2 * out_numel * c_in_g * kh * kw + 8 * out_numel
    return Cost(flops=flops, bytes=element_bytes(x, w, b) + out_numel * x.element_size())


TASK = Task(
    id="Fusion/fused_dropout_relu_batch_norm_conv2d",
    difficulty=3,
    entry="fused_dropout_relu_batch_norm_conv2d",
    signature=("fused_dropout_relu_batch_norm_conv2d(input: torch.Tensor, weight: torch.Tensor, bias=None, "
               "stride=1, padding=0, dilation=1, groups=1, p=0.5, training=True, inplace=False)"),
    description=(
        "Convolve as torch.nn.functional.conv2d does (`input` (N, C_in, H, W), `weight` (C_out, C_in/groups, kH, "
        "kW), optional `bias`, int or pair stride/padding/dilation, groups); batch-normalize each output channel "
        "with the statistics of the whole batch, (y - mean_c) / sqrt(var_c + 1e-5) over N, OH, OW with the biased "
        "variance (no running buffers, no affine; this holds for training=False too); apply ReLU; then, with "
        "training=True, zero each element with probability p and scale the kept ones by 1 / (1 - p). Return a new "
        "(N, C_out, OH, OW) tensor in the input's dtype (float32 accumulation, TF32 accepted). Draw a fresh seed "
        "per call with torch.randint(0, 2**31 - 1, (1,)).item() for an in-kernel mask (e.g. tl.rand); the result is "
        "judged statistically (a mask independent between elements, rows and calls). `inplace` changes nothing."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=StatisticalTF32(check=check),
    allowed=(Allowance(api="torch.randint", aten=("randint",),
                       why="draw a fresh seed on the host for the kernel's dropout mask"),),
)
