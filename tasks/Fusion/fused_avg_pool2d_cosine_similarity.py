"""Cosine similarity over channels, then 2-D average pooling of the similarity map."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(x1, x2, kernel_size, stride=None, padding=0, eps=1e-8):
    similarity = torch.nn.functional.cosine_similarity(x1, x2, dim=1, eps=eps)
    return torch.nn.functional.avg_pool2d(similarity.unsqueeze(1), kernel_size=kernel_size, stride=stride,
                                          padding=padding)


# Per size, the cases seeds rotate through: (N, C, H, W), kernel_size, stride, padding, eps.
# The standard size has one configuration, so the timing seeds share it.
CASES = {
    "small": [((2, 16, 12, 14), 2, None, 0, 1e-8),
              ((3, 40, 11, 9), 3, 1, 1, 1e-6)],      # its first image row has norms near eps
    "edge": [((1, 1, 5, 7), 3, 2, 1, 1e-8),          # one channel: similarities are +-1
             ((2, 33, 2, 6), 2, None, 0, 1e-8)],     # a single output row
    "standard": [((32, 96, 128, 128), 2, None, 0, 1e-8)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, kernel_size, stride, padding, eps = cases[seed % len(cases)]
    x1 = randn(shape, gen, dtype, mode)
    # correlated with x1, so that similarities spread over (-1, 1) rather than cluster at 0
    x2 = (0.6 * x1.float() + randn(shape, gen, torch.float32, mode)).to(dtype)
    if eps > 1e-8:
        # vectors whose norms exceed eps while the product of the norms does not: each norm is
        # clamped on its own, so their similarity is still a plain cosine
        x1[:, :, 0, :] *= 1e-4
        x2[:, :, 0, :] *= 1e-4
    return Inputs((x1, x2, kernel_size), {"stride": stride, "padding": padding, "eps": eps})


def cost(inputs):
    x1, x2, k = inputs.args
    s = inputs.kwargs.get("stride") or k
    p = inputs.kwargs.get("padding", 0)
    n, c, h, w = x1.shape
    oh = (h + 2 * p - k) // s + 1
    ow = (w + 2 * p - k) // s + 1
    return Cost(flops=6 * x1.numel() + k * k * n * oh * ow,
                bytes=element_bytes(x1, x2) + n * oh * ow * x1.element_size())


TASK = Task(
    id="Fusion/fused_avg_pool2d_cosine_similarity",
    difficulty=3,
    entry="fused_avg_pool2d_cosine_similarity",
    signature=("fused_avg_pool2d_cosine_similarity(x1: torch.Tensor, x2: torch.Tensor, kernel_size: int, "
               "stride: int = None, padding: int = 0, eps: float = 1e-8)"),
    description=(
        "`x1` and `x2` have the same shape (N, C, H, W). At every (n, h, w) compute the cosine similarity of the "
        "two C-vectors, sim = dot(a, b) / (max(||a||, eps) * max(||b||, eps)) (each norm clamped separately, "
        "as torch.nn.functional.cosine_similarity does), giving an (N, 1, H, W) map. Average-pool the map with a "
        "square kernel_size window, `stride` (None means kernel_size) and `padding` zeros on every side, padded "
        "zeros counting in the divisor kernel_size**2 (avg_pool2d's defaults, floor output size: "
        "OH = (H + 2*padding - kernel_size) // stride + 1, likewise OW). Return a new (N, 1, OH, OW) tensor in "
        "the inputs' dtype, computed in float32."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
