"""Elementwise cosine followed by 1-D average pooling over the last dimension."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return torch.nn.functional.avg_pool1d(torch.cos(input), kernel_size=kernel_size, stride=stride,
                                          padding=padding, ceil_mode=ceil_mode,
                                          count_include_pad=count_include_pad)


# Per size, the cases seeds rotate through: input shape, kernel_size, stride, padding, ceil_mode,
# count_include_pad. The standard size has one configuration, so the timing seeds share it.
CASES = {
    "small": [((4, 6, 67), 5, 2, 2, False, True),
              ((3, 5, 50), 3, 2, 0, True, True)],          # the last window is cut short by ceil_mode
    "edge": [((1, 3, 1001), 7, 3, 3, True, False),
             ((4, 5), 2, None, 1, True, False)],           # a (C, L) input
    "standard": [((64, 120, 8192), 3, 2, 1, True, False)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, kernel_size, stride, padding, ceil_mode, count_include_pad = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode, scale=2.0)
    return Inputs((x, kernel_size), {"stride": stride, "padding": padding, "ceil_mode": ceil_mode,
                                     "count_include_pad": count_include_pad})


def _out_length(length, k, s, p, ceil_mode):
    span = length + 2 * p - k
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= length + p:
        out -= 1
    return out


def cost(inputs):
    x, k = inputs.args
    s = inputs.kwargs.get("stride") or k
    l_out = _out_length(x.shape[-1], k, s, inputs.kwargs.get("padding", 0), inputs.kwargs.get("ceil_mode", False))
    out_numel = x.numel() // x.shape[-1] * l_out
    return Cost(flops=10 * x.numel() + k * out_numel, bytes=element_bytes(x) + out_numel * x.element_size())


TASK = Task(
    id="Fusion/fused_cos_avg_pool1d",
    difficulty=3,
    entry="fused_cos_avg_pool1d",
    signature=("fused_cos_avg_pool1d(input: torch.Tensor, kernel_size: int, stride: int = None, padding: int = 0, "
               "ceil_mode: bool = False, count_include_pad: bool = True)"),
    description=(
        "Take c = cos(input) elementwise for an (N, C, L) or (C, L) input, then average-pool c along the last "
        "dimension exactly as torch.nn.functional.avg_pool1d does: window j covers positions j*stride - padding "
        ".. j*stride - padding + kernel_size - 1 of c padded with zeros (the padding holds zeros after the "
        "cosine, not cos(0)); stride None means kernel_size. L_out = floor or, with ceil_mode=True, ceil of "
        "(L + 2*padding - kernel_size) / stride, plus 1, minus one more if ceil_mode makes the last window start "
        "at or beyond L + padding. The divisor is the window's length clipped to [-padding, L + padding) when "
        "count_include_pad=True, or the number of real (unpadded) elements it covers otherwise. Return a new "
        "tensor (..., L_out) in the input's dtype, computed in float32."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
