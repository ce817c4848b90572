"""ReLU, then 2-D fractional max pooling with its pseudo-random pooling regions given as an input."""

import math

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

# The pooling offsets must stay this far (in input positions) from a whole number, so that computing
# the region starts in float32 or float64 gives the same integers.
MARGIN = 1e-3


def reference(input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
    x = torch.nn.functional.relu(input)
    # torch computes the region starts in the input's dtype on the CPU (in float32 on the GPU); pooling
    # float32 copies of half-precision inputs gives the float32 starts everywhere, and the values (only
    # selected, never rounded) are exact in the input's dtype.
    work = x if x.dtype in (torch.float32, torch.float64) else x.float()
    samples = None if _random_samples is None else _random_samples.to(work.dtype)
    result = torch.nn.functional.fractional_max_pool2d(work, kernel_size, output_size=output_size,
                                                       output_ratio=output_ratio, return_indices=return_indices,
                                                       _random_samples=samples)
    if return_indices:
        return result[0].to(x.dtype), result[1]
    return result.to(x.dtype)


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _out_size(shape, output_size, output_ratio):
    if output_size is not None:
        return _pair(output_size)
    rh, rw = _pair(output_ratio)
    return int(shape[-2] * rh), int(shape[-1] * rw)


def safe_samples(planes, lengths, kernel, outs, gen, dtype):
    """(planes, 2) samples in [0, 1) of `dtype` (index 0: width, 1: height) whose region offsets
    (j + u) * alpha and u * alpha all stay MARGIN away from whole numbers."""
    u = torch.rand((planes, 2), generator=gen).to(dtype)
    for _ in range(1000):
        bad = torch.zeros(planes, 2, dtype=torch.bool)
        for axis in range(2):
            length, k, m = lengths[axis], kernel[axis], outs[axis]
            if m <= 1:
                continue
            alpha = (length - k) / (m - 1)
            v = u[:, axis].to(torch.float64)
            t = torch.cat([(torch.arange(m - 1, dtype=torch.float64)[None, :] + v[:, None]) * alpha,
                           (v * alpha)[:, None]], dim=1)
            frac = t - t.floor()
            bad[:, axis] = ((frac < MARGIN) | (frac > 1 - MARGIN)).any(dim=1)
        if not bool(bad.any()):
            return u
        u = torch.where(bad, torch.rand((planes, 2), generator=gen).to(dtype), u)
    raise RuntimeError("could not draw pooling samples away from region boundaries")


# (input shape, kernel_size, output_size, output_ratio, return_indices) per (size, seed): 4-D and 3-D
# inputs, square and rectangular windows, sizes given directly or as ratios, width 1. The standard size
# has one configuration.
CASES = {
    "small": [((2, 8, 20, 18), 2, (9, 8), None, False), ((3, 15, 17), (3, 2), None, (0.5, 0.6), True)],
    "edge": [((1, 3, 7, 10), (2, 3), (6, 4), None, True), ((2, 1, 5, 1), (2, 1), (4, 1), None, False)],
    "standard": [((32, 96, 128, 128), 2, None, (0.5, 0.5), True)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, kernel_size, output_size, output_ratio, return_indices = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode)
    kh, kw = _pair(kernel_size)
    oh, ow = _out_size(shape, output_size, output_ratio)
    batch, channels = (shape[0], shape[1]) if len(shape) == 4 else (1, shape[0])
    samples = safe_samples(batch * channels, (shape[-1], shape[-2]), (kw, kh), (ow, oh), gen, dtype)
    samples = samples.reshape(batch, channels, 2)
    kwargs = {"output_size": output_size, "output_ratio": output_ratio, "return_indices": return_indices,
              "_random_samples": samples}
    return Inputs((x, kernel_size), kwargs)


def cost(inputs):
    x, kernel_size = inputs.args
    kh, kw = _pair(kernel_size)
    oh, ow = _out_size(x.shape, inputs.kwargs.get("output_size"), inputs.kwargs.get("output_ratio"))
    planes = x.numel() // (x.shape[-1] * x.shape[-2])
    out_numel = planes * oh * ow
    out_bytes = out_numel * (x.element_size() + (8 if inputs.kwargs.get("return_indices") else 0))
    read = min(x.numel(), out_numel * kh * kw) * x.element_size()
    return Cost(flops=out_numel * kh * kw, bytes=read + out_bytes + element_bytes(inputs.kwargs["_random_samples"]))


TASK = Task(
    id="Fusion/fused_fractional_max_pool2d_with_relu",
    difficulty=4,
    entry="fused_fractional_max_pool2d_with_relu",
    signature=("fused_fractional_max_pool2d_with_relu(input: torch.Tensor, kernel_size, output_size=None, "
               "output_ratio=None, return_indices=False, _random_samples=None)"),
    kernelbenchx_signature=("fused_fractional_max_pool2d_with_relu(input: torch.Tensor, kernel_size, "
                            "output_size=None, output_ratio=None, return_indices=False)"),
    kernelbenchx_difference=(
        "adds `_random_samples` (the argument torch's own fractional_max_pool2d takes): KernelBench-X's function "
        "draws the pooling windows from torch's random generator inside the call, so only a kernel that draws "
        "the very same numbers the same way could match it; here every case passes its windows, and a kernel's "
        "choice of maxima is checked exactly. A KernelBench-X candidate adds the parameter and uses it."),
    description=(
        "ReLU, then fractional max pooling of each (H, W) plane of `input` ((N, C, H, W), or (C, H, W) with N = 1) "
        "over kH x kW windows (`kernel_size`, int or pair) to (OH, OW) = `output_size` (int or pair) or else "
        "(int(H * ratio_h), int(W * ratio_w)) from `output_ratio`. The pseudo-random windows are fixed by "
        "`_random_samples` ((N, C, 2), input's dtype, in [0, 1)): with u = samples[n, c, 1] and alpha = "
        "(H - kH) / (OH - 1) computed in float32, window row i starts at floor((i + u) * alpha) - floor(u * alpha) "
        "for i < OH - 1 and at H - kH for the last; columns likewise use samples[n, c, 0], W, kW and OW. Return the "
        "window maxima of relu(input), shape (..., OH, OW) in the input's dtype, and with return_indices=True the "
        "tuple (values, indices), indices being the int64 flat position h * W + w in the plane of the first maximum "
        "in row-major window order. Values are only selected, so results must match exactly."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Exact(),
)
