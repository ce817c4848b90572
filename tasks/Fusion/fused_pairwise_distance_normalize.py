"""Normalize the rows of two matrices to unit p-norm, then take the p-norm distance between them."""

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(x1, x2, p_norm=2.0, eps_norm=1e-12, eps_distance=1e-6, keepdim=False):
    n1 = torch.nn.functional.normalize(x1, p=p_norm, dim=1, eps=eps_norm)
    n2 = torch.nn.functional.normalize(x2, p=p_norm, dim=1, eps=eps_norm)
    return torch.nn.functional.pairwise_distance(n1, n2, p=p_norm, eps=eps_distance, keepdim=keepdim)


# Per size, the cases seeds rotate through: x1 shape, x2 shape, p_norm, eps_norm, eps_distance, keepdim,
# and whether the first row of x1 is all zeros (its norm is then below eps_norm). The standard size has
# one configuration, so the timing seeds share it.
CASES = {
    "small": [((64, 100), (64, 100), 2.0, 1e-12, 1e-6, False, False),
              ((33, 257), (33, 257), 1.0, 1e-12, 1e-6, True, False)],
    "edge": [((1, 1), (1, 1), 2.0, 1e-12, 1e-6, True, False),
             ((7, 1001), (1, 1001), 3.0, 1e-4, 1e-3, False, True)],
    "standard": [((16384, 4096), (16384, 4096), 2.0, 1e-12, 1e-6, False, False)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    s1, s2, p, eps_norm, eps_distance, keepdim, zero_row = cases[seed % len(cases)]
    x1 = randn(s1, gen, torch.float32, mode)
    x2 = randn(s2, gen, torch.float32, mode, scale=0.5, shift=0.3)
    if zero_row:
        x1[0] = 0.0
    return Inputs((x1.to(dtype), x2.to(dtype)),
                  {"p_norm": p, "eps_norm": eps_norm, "eps_distance": eps_distance, "keepdim": keepdim})


def cost(inputs):
    x1, x2 = inputs.args
    rows = max(x1.shape[0], x2.shape[0])
    d = x1.shape[1]
    return Cost(flops=3 * (x1.numel() + x2.numel()) + 4 * rows * d,
                bytes=element_bytes(x1, x2) + rows * x1.element_size())


TASK = Task(
    id="Fusion/fused_pairwise_distance_normalize",
    difficulty=2,
    entry="fused_pairwise_distance_normalize",
    signature=("fused_pairwise_distance_normalize(x1: torch.Tensor, x2: torch.Tensor, p_norm: float = 2.0, "
               "eps_norm: float = 1e-12, eps_distance: float = 1e-6, keepdim: bool = False)"),
    description=(
        "`x1` and `x2` are (N, D) matrices (either may have a single row, (1, D), broadcast over the other's "
        "rows). Divide every row of each by max(||row||_p, eps_norm), where ||v||_p = (sum |v_i|^p)^(1/p) and "
        "p = p_norm > 0, as torch.nn.functional.normalize(dim=1) does; then for each row i return "
        "||u1_i - u2_i + eps_distance||_p (eps_distance added to every difference, as "
        "torch.nn.functional.pairwise_distance does) with the same p. The result is a new tensor of shape (N,), "
        "or (N, 1) when keepdim is True, in the inputs' dtype; accumulate in float32 for half inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    # Rows of unit vectors that nearly coincide give distances far below the operands' scale (1): a
    # rounding in the normalization is then a large part of the result.
    contract=Tolerance(abs_floor=1.0),
)
