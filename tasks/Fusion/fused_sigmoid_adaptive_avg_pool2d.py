"""2-D adaptive average pooling onto a requested grid, then the logistic sigmoid."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, output_size):
    return torch.sigmoid(torch.nn.functional.adaptive_avg_pool2d(input, output_size))


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
    index = seed % 2 + (1 if size == "edge" and mode == "outlier" and seed % 2 else 0)
    shape, output_size = cases[index]
    # a spread of 2 spreads the pooled values over the curved part of the sigmoid, not just its linear middle
    return Inputs((randn(shape, gen, dtype, mode, scale=2.0, shift=0.25), output_size))


def _output_hw(x, output_size):
    h, w = x.shape[-2:]
    oh, ow = output_size if isinstance(output_size, (tuple, list)) else (output_size, output_size)
    return (h if oh is None else oh), (w if ow is None else ow)


def cost(inputs):
    x, output_size = inputs.args
    oh, ow = _output_hw(x, output_size)
    out_numel = x.numel() // (x.shape[-2] * x.shape[-1]) * oh * ow
    # one add per input element, then a divide and the sigmoid (about 4 flops) per output
    return Cost(flops=x.numel() + 5 * out_numel, bytes=element_bytes(x) + out_numel * x.element_size())


TASK = Task(
    id="Fusion/fused_sigmoid_adaptive_avg_pool2d",
    difficulty=2,
    entry="fused_sigmoid_adaptive_avg_pool2d",
    signature="fused_sigmoid_adaptive_avg_pool2d(input: Tensor, output_size: Union[int, Tuple[int, int]])",
    description=(
        "Adaptive 2-D average pooling of an (N, C, H, W) or (C, H, W) tensor onto an OH x OW grid as "
        "torch.nn.functional.adaptive_avg_pool2d does, then 1 / (1 + exp(-v)) on every pooled value. "
        "`output_size` is an int (OH = OW) or a pair whose entries may be None (that dimension keeps its input "
        "size). Output row i averages input rows floor(i*H/OH) up to but excluding ceil((i+1)*H/OH), columns "
        "likewise with W and OW, so windows can differ in size and overlap. Return a new tensor (leading "
        "dimensions kept, last two OH, OW) in the input's dtype, averaging in float32."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
