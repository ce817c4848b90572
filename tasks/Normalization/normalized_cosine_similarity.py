"""Cosine similarity of two tensors after each is L_p-normalized along the same dimension."""

import math

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(x1, x2, dim=1, eps_similarity=1e-8, p_norm=2, eps_norm=1e-12):
    x1 = torch.nn.functional.normalize(x1, p=p_norm, dim=dim, eps=eps_norm)
    x2 = torch.nn.functional.normalize(x2, p=p_norm, dim=dim, eps=eps_norm)
    return torch.nn.functional.cosine_similarity(x1, x2, dim=dim, eps=eps_similarity)


# (shape of x1, shape of x2, dim, p_norm) per (size, seed); x2 has x1's rank and may hold size-1
# dims (never the reduced one) that broadcast. The standard size has one configuration, so the
# seeds that rotate during timing share it.
CASES = {
    "small": [((8, 64, 40), (8, 64, 40), 1, 2), ((48, 96), (1, 96), -1, 1)],
    "edge": [((1001, 3), (1001, 3), 0, 3.0), ((3, 5, 1, 7), (3, 1, 1, 7), 3, 2)],
    "standard": [((48, 512, 2048), (48, 512, 2048), 1, 2)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape1, shape2, dim, p_norm = cases[seed % len(cases)]
    x1 = randn(shape1, gen, dtype, mode)
    x2 = randn(shape2, gen, dtype, mode)
    return Inputs((x1, x2), {"dim": dim, "eps_similarity": 1e-8, "p_norm": p_norm, "eps_norm": 1e-12})


def cost(inputs):
    x1, x2 = inputs.args
    dim = inputs.kwargs.get("dim", 1) % x1.dim()
    shape = torch.broadcast_shapes(x1.shape, x2.shape)
    out_numel = math.prod(s for d, s in enumerate(shape) if d != dim)
    return Cost(flops=8 * math.prod(shape), bytes=element_bytes(x1, x2) + out_numel * x1.element_size())


TASK = Task(
    id="Normalization/normalized_cosine_similarity",
    difficulty=3,
    entry="normalized_cosine_similarity",
    signature=("normalized_cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps_similarity: float = 1e-8, "
               "p_norm: float = 2, eps_norm: float = 1e-12)"),
    description=(
        "Normalize x1 and x2 separately along `dim` as torch.nn.functional.normalize does, u = x1 / max(||x1||_p, "
        "eps_norm) and v = x2 / max(||x2||_p, eps_norm) with p = p_norm (a positive number), then return their "
        "cosine similarity along `dim` as torch.nn.functional.cosine_similarity does: "
        "sum(u / max(||u||_2, eps_similarity) * v / max(||v||_2, eps_similarity)) over `dim`, which is removed "
        "from the result. x2 has x1's number of dims and broadcasts against it (its size-1 dims, never the "
        "reduced one, repeat); `dim` may be negative. Return the result in the inputs' dtype, computing in float32."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
