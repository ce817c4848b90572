"""Adaptive average pooling of two image batches, then the p-norm distance between the pooled rows."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(x1, x2, output_size, p=2.0, eps=1e-6, keepdim=False):
    pooled1 = torch.nn.functional.adaptive_avg_pool2d(x1, output_size)
    pooled2 = torch.nn.functional.adaptive_avg_pool2d(x2, output_size)
    return torch.nn.functional.pairwise_distance(pooled1, pooled2, p=p, eps=eps, keepdim=keepdim)


# Per size, the cases seeds rotate through: input shape (both inputs), output_size, p, eps, keepdim.
# The standard size has one configuration, so the timing seeds share it.
CASES = {
    "small": [((2, 8, 13, 11), (4, 3), 2.0, 1e-6, False),
              ((3, 10, 10), 5, 1.0, 1e-6, True)],
    "edge": [((1, 1, 1, 1), 1, 2.0, 1e-6, False),
             ((2, 3, 5, 9), (None, 4), 3.0, 1e-4, True)],
    "standard": [((64, 256, 64, 64), (7, 7), 2.0, 1e-6, False)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, output_size, p, eps, keepdim = cases[seed % len(cases)]
    x1 = randn(shape, gen, dtype, mode)
    x2 = randn(shape, gen, dtype, mode, scale=0.7, shift=0.2)
    return Inputs((x1, x2, output_size), {"p": p, "eps": eps, "keepdim": keepdim})


def _out_hw(shape, output_size):
    oh, ow = output_size if isinstance(output_size, (tuple, list)) else (output_size, output_size)
    return (shape[-2] if oh is None else oh), (shape[-1] if ow is None else ow)


def cost(inputs):
    x1, x2, output_size = inputs.args
    oh, ow = _out_hw(x1.shape, output_size)
    planes = x1.numel() // (x1.shape[-1] * x1.shape[-2])
    return Cost(flops=x1.numel() + x2.numel() + 4 * planes * oh * ow,
                bytes=element_bytes(x1, x2) + planes * oh * x1.element_size())


TASK = Task(
    id="Fusion/fused_pairwise_distance_adaptive_avg_pool2d",
    difficulty=4,
    entry="fused_pairwise_distance_adaptive_avg_pool2d",
    signature=("fused_pairwise_distance_adaptive_avg_pool2d(x1: torch.Tensor, x2: torch.Tensor, output_size: int "
               "or tuple, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False)"),
    description=(
        "`x1` and `x2` have the same shape, (N, C, H, W) or (C, H, W). Average-pool each adaptively to (OH, OW) = "
        "`output_size` (an int for both, or a pair whose None entries keep the input's size): output cell (i, j) "
        "averages rows floor(i*H/OH) .. ceil((i+1)*H/OH)-1 and columns floor(j*W/OW) .. ceil((j+1)*W/OW)-1, as "
        "torch.nn.functional.adaptive_avg_pool2d does. Then, along the last (OW) dimension, return "
        "(sum_j |a_j - b_j + eps|^p)^(1/p) of the pooled a = pool(x1), b = pool(x2) for p > 0, as "
        "torch.nn.functional.pairwise_distance does: shape (N, C, OH) (or (C, OH)), with a trailing 1 when "
        "keepdim is True, in the inputs' dtype. Accumulate in float32 for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
