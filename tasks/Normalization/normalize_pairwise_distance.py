"""Pairwise p-norm distances between x1 and x2, then L_p-normalized along one dimension."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(x1, x2, p_distance=2.0, eps_distance=1e-6, keepdim=False, p_norm=2, dim_norm=1, eps_norm=1e-12):
    distance = torch.nn.functional.pairwise_distance(x1, x2, p=p_distance, eps=eps_distance, keepdim=keepdim)
    return torch.nn.functional.normalize(distance, p=p_norm, dim=dim_norm, eps=eps_norm)


# (shape, p_distance, eps_distance, keepdim, p_norm, dim_norm) per (size, seed). The standard
# size has one configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [((8, 64, 33), 2.0, 1e-6, False, 2, 1), ((16, 20, 40), 1.0, 1e-3, True, 1, 0)],
    "edge": [((1001, 3), 3.0, 1e-6, True, 2, 0), ((5, 7, 1), 2.0, 1e-6, False, 3.0, -1)],
    "standard": [((32, 4096, 512), 2.0, 1e-6, False, 2, 1)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, p_distance, eps_distance, keepdim, p_norm, dim_norm = cases[seed % len(cases)]
    x1 = randn(shape, gen, dtype, mode)
    x2 = randn(shape, gen, dtype, mode)
    kwargs = {"p_distance": p_distance, "eps_distance": eps_distance, "keepdim": keepdim, "p_norm": p_norm,
              "dim_norm": dim_norm, "eps_norm": 1e-12}
    return Inputs((x1, x2), kwargs)


def cost(inputs):
    x1, x2 = inputs.args
    rows = x1.numel() // x1.shape[-1]
    return Cost(flops=4 * x1.numel() + 4 * rows, bytes=element_bytes(x1, x2) + rows * x1.element_size())


TASK = Task(
    id="Normalization/normalize_pairwise_distance",
    difficulty=3,
    entry="normalize_pairwise_distance",
    signature=("normalize_pairwise_distance(x1, x2, p_distance=2.0, eps_distance=1e-6, keepdim=False, p_norm=2, "
               "dim_norm=1, eps_norm=1e-12)"),
    description=(
        "x1 and x2 have the same shape (..., D). First take the distance along the last dim, "
        "d = (sum_k |x1[..., k] - x2[..., k] + eps_distance|**p_distance) ** (1/p_distance), as "
        "torch.nn.functional.pairwise_distance does (eps is added to the difference before the norm); d has the "
        "leading shape, with a trailing size-1 dim when keepdim is True. Then normalize d along its dim `dim_norm` "
        "(negative counts from the end) as torch.nn.functional.normalize does: d / max(||d||_p_norm, eps_norm), the "
        "norm taken over that dim. p_distance and p_norm are positive finite numbers; return the result in the "
        "inputs' dtype, computing in float32."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
