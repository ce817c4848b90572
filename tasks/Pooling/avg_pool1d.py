"""1-D average pooling over the last dimension, zero padding counted in the average."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, kernel_size, stride=None, padding=0):
    return torch.nn.functional.avg_pool1d(input, kernel_size, stride, padding)


# Per size, the cases seeds rotate through: (N, C, L), kernel_size, stride, padding.
# The standard size has one configuration, so the timing seeds share it.
SMALL = (((4, 6, 67), 5, 2, 2),
         ((3, 5, 50), 2, None, 0))
EDGE = (((1, 3, 1001), (7,), 3, 3),
        ((3, 1, 5), 5, 1, 0))
STANDARD = (((64, 120, 8192), 3, 1, 1),)       # 63M elements in, 63M out


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    shape, kernel_size, stride, padding = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode)
    return Inputs((x, kernel_size), {"stride": stride, "padding": padding})


def _single(v):
    return int(v[0]) if isinstance(v, (tuple, list)) else int(v)


def cost(inputs):
    x, kernel_size = inputs.args
    k = _single(kernel_size)
    stride = inputs.kwargs.get("stride")
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _single(stride)
    p = _single(inputs.kwargs.get("padding", 0))
    length = x.shape[-1]
    l_out = (length + 2 * p - k) // s + 1
    out_numel = x.numel() // length * l_out
    return Cost(flops=k * out_numel, bytes=element_bytes(x) + out_numel * x.element_size())


TASK = Task(
    id="Pooling/avg_pool1d",
    difficulty=2,
    entry="avg_pool1d",
    signature="avg_pool1d(input, kernel_size, stride=None, padding=0)",
    description=(
        "Average pooling along the last dimension of an (N, C, L) input (a (C, L) input works the same), "
        "as torch.nn.functional.avg_pool1d with its defaults ceil_mode=False and count_include_pad=True. "
        "kernel_size, stride and padding are ints or 1-element tuples; stride None means stride = "
        "kernel_size. The input is conceptually padded with `padding` zeros on both ends, and output "
        "position j is the sum of the padded input at j*stride .. j*stride+kernel_size-1 divided by "
        "kernel_size (padded zeros count in the divisor); L_out = (L + 2*padding - kernel_size) // stride + 1. "
        "Return a new (N, C, L_out) tensor in the input's dtype, accumulating in float32."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
