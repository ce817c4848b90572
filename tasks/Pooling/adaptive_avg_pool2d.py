"""2-D adaptive average pooling: any input size onto a requested output grid."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, output_size):
    return torch.nn.functional.adaptive_avg_pool2d(input, output_size)


# Per size, the cases seeds rotate through: input shape, output_size. They cover a pair, a single
# int, None (keep that dimension), a 3-D input, an output larger than the input (overlapping
# windows of one or two pixels) and a whole-plane average. The standard size has one configuration.
SMALL = (((2, 8, 13, 17), (5, 7)),
         ((8, 12, 9), 4))
EDGE = (((1, 3, 7, 1), (None, 1)),
        ((2, 3, 5, 6), (9, 11)),
        ((3, 1, 19, 23), 1))
STANDARD = (((32, 256, 96, 80), (56, 48)),)      # 63M elements in, 22M out


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    # the outlier mode of the edge size takes the whole-plane case for odd seeds
    index = seed % 2 + (2 if size == "edge" and mode == "outlier" and seed % 2 else 0)
    shape, output_size = cases[min(index, len(cases) - 1)]
    return Inputs((randn(shape, gen, dtype, mode, shift=0.25), output_size))


def _output_hw(x, output_size):
    h, w = x.shape[-2:]
    oh, ow = output_size if isinstance(output_size, (tuple, list)) else (output_size, output_size)
    return (h if oh is None else oh), (w if ow is None else ow)


def cost(inputs):
    x, output_size = inputs.args
    oh, ow = _output_hw(x, output_size)
    out_numel = x.numel() // (x.shape[-2] * x.shape[-1]) * oh * ow
    return Cost(flops=x.numel(), bytes=element_bytes(x) + out_numel * x.element_size())


TASK = Task(
    id="Pooling/adaptive_avg_pool2d",
    difficulty=3,
    entry="adaptive_avg_pool2d",
    signature="adaptive_avg_pool2d(input, output_size)",
    description=(
        "Adaptive 2-D average pooling of an (N, C, H, W) or (C, H, W) tensor onto an OH x OW grid, as "
        "torch.nn.functional.adaptive_avg_pool2d. `output_size` is an int (OH = OW) or a pair whose entries "
        "may be None, meaning that dimension keeps its input size. Output row i averages input rows "
        "floor(i*H/OH) up to but excluding ceil((i+1)*H/OH), and columns likewise with W and OW, so windows "
        "differ in size, may overlap, and have one or two pixels when the output is larger than the input. "
        "Return a new tensor (leading dimensions kept, last two replaced by OH, OW) in the input's dtype, "
        "averaging in float32."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    kernelbenchx_signature="adaptive_avg_pool2d(output_size)",
)
