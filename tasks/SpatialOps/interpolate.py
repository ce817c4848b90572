"""Resize NCHW images with nearest-neighbour or bilinear interpolation."""

import math

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return torch.nn.functional.interpolate(input, size=size, scale_factor=scale_factor, mode=mode,
                                           align_corners=align_corners)


# Per size, the cases seeds rotate through: (N, C, H, W), keyword arguments.
# The standard size has one configuration, so the timing seeds share it.
SMALL = (((2, 3, 10, 12), dict(scale_factor=(1.75, 0.8), mode="bilinear", align_corners=False)),  # -> 17x9
         ((2, 3, 11, 8), dict(scale_factor=(1.45, 0.6), mode="nearest")))                          # -> 15x4
EDGE = (((1, 2, 5, 7), dict(size=(1, 13), mode="bilinear", align_corners=True)),
        ((3, 1, 7, 4), dict(size=(5, 13), mode="nearest")))
STANDARD = (((16, 60, 128, 128), dict(scale_factor=2.0, mode="bilinear", align_corners=False)),)  # 16M -> 63M


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    shape, kwargs = cases[seed % len(cases)]
    return Inputs((randn(shape, gen, dtype, mode),), dict(kwargs))


def _output_hw(x, size, scale_factor):
    h, w = x.shape[-2:]
    if size is not None:
        return tuple(size) if isinstance(size, (tuple, list)) else (size, size)
    sh, sw = scale_factor if isinstance(scale_factor, (tuple, list)) else (scale_factor, scale_factor)
    return math.floor(h * sh), math.floor(w * sw)


def cost(inputs):
    (x,) = inputs.args
    kw = inputs.kwargs
    oh, ow = _output_hw(x, kw.get("size"), kw.get("scale_factor"))
    out_numel = x.shape[0] * x.shape[1] * oh * ow
    flops = 0 if kw.get("mode", "nearest") == "nearest" else 11 * out_numel
    return Cost(flops=flops, bytes=element_bytes(x) + out_numel * x.element_size())


TASK = Task(
    id="SpatialOps/interpolate",
    difficulty=3,
    entry="interpolate",
    signature="interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None)",
    description=(
        "Resize the last two dimensions of an (N, C, H, W) tensor as torch.nn.functional.interpolate "
        "does, for mode='nearest' and mode='bilinear' (align_corners False or True; None means False). "
        "The output size is `size` (int or (OH, OW)) or else floor(H * scale_factor) by floor(W * "
        "scale_factor) (a float or a pair). Match torch's source-coordinate rules exactly, computed in "
        "float32: when a dimension keeps its size it is copied; otherwise with align_corners=True the "
        "scale is (in-1)/(out-1) (0 if out == 1) and src = scale*dst, else the scale is 1/scale_factor "
        "when scale_factor was given and in/out otherwise, with src = scale*(dst+0.5)-0.5 clamped at 0 for "
        "bilinear, and for nearest src index = min(floor(dst*scale), in-1) (an exact doubling uses dst // 2). "
        "Bilinear blends the two neighbouring input rows and columns (the upper one clamped to in-1) by "
        "the fractional part of src; return a new tensor in the input's dtype, computing in float32."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
