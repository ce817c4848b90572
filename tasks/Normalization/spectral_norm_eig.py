"""Largest absolute eigenvalue (spectral norm) of each symmetric matrix in a batch."""

import math

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

def reference(A, *, out=None):
    result = torch.linalg.eigvalsh(A).abs().amax(dim=-1)
    if out is not None:
        out.copy_(result)
        return out
    return result


def _symmetric(batch, n, gen, mode):
    """Random symmetric matrices with a dominant eigenvalue: a Wigner matrix, whose spectrum lies in about
    [-2, 2], plus a rank-one spike theta * u u^T with |theta| in [5, 8], whose eigenvalue (about theta + 1/theta)
    stands well clear of the rest. In outlier mode the spike direction u has outlier coordinates, so a few rows
    and columns hold large values."""
    g = torch.randn((batch, n, n), generator=gen, dtype=torch.float64)
    w = (g + g.transpose(1, 2)) / math.sqrt(2 * n)
    u = randn((batch, n), gen, torch.float64, mode)
    u = u / u.square().sum(dim=1, keepdim=True).sqrt()
    sign = torch.randint(0, 2, (batch, 1, 1), generator=gen).to(torch.float64) * 2 - 1
    theta = sign * (5.0 + 3.0 * torch.rand((batch, 1, 1), generator=gen, dtype=torch.float64))
    scale = 0.5 + 1.5 * torch.rand((batch, 1, 1), generator=gen, dtype=torch.float64)
    return scale * (w + theta * (u[:, :, None] * u[:, None, :]))


# (batch shape, n) per (size, seed). The standard size has one configuration, so the seeds that
# rotate during timing share it.
CASES = {
    "small": [((3,), 64), ((2, 2), 48)],
    "edge": [((), 1), ((2, 3), 17)],
    "standard": [((32,), 512)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    batch, n = cases[seed % len(cases)]
    A = _symmetric(math.prod(batch), n, gen, mode).reshape(*batch, n, n).to(dtype)
    return Inputs((A,))


def cost(inputs):
    (A,) = inputs.args
    n = A.shape[-1]
    batch = A.numel() // (n * n)
    # at least one pass over every matrix (one matrix-vector product) and one value written per matrix
    return Cost(flops=2 * A.numel(), bytes=element_bytes(A) + batch * A.element_size())


TASK = Task(
    id="Normalization/spectral_norm_eig",
    difficulty=4,
    entry="spectral_norm_eig",
    signature="spectral_norm_eig(A, *, out=None)",
    description=(
        "A has shape (*, n, n): zero or more batch dims of real symmetric matrices. Return, for each matrix, the "
        "largest absolute value of its eigenvalues (its spectral norm, since it is symmetric) as a tensor of "
        "shape (*) in A's dtype (a 0-dim tensor when there are no batch dims); if `out` is given, write into it "
        "and return it. Every test matrix has a dominant eigenvalue, with |second largest eigenvalue| <= 0.5 * "
        "|largest|, so power iteration (repeated A @ v with normalization, then ||A v|| for the unit vector v) "
        "converges quickly; compute in float32 and iterate until the estimate is accurate to about 1e-6 relative."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
