"""Tile a tensor (repeat it as a whole along each dimension), then exponentiate."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, dims, *, out=None):
    result = torch.exp(torch.tile(input, dims))
    if out is not None:
        out.copy_(result)
        return out
    return result


# Per (size, seed): (input shape, dims). Dims shorter than, equal to and longer than the input's rank;
# repeats on the last dimension and on leading ones. The standard size has one configuration.
CASES = {
    "small": [((33, 257), (2, 3)), ((4, 9, 13), (2,))],
    "edge": [((1001,), (3, 1, 2)), ((5, 1, 7, 1), (1, 4, 1, 3))],
    "standard": [((8, 1024, 2048), (2, 2, 1))],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dims = cases[seed % len(cases)]
    return Inputs((randn(shape, gen, dtype, mode), dims))


def cost(inputs):
    x, dims = inputs.args
    reps = 1
    for r in dims:
        reps *= r
    out_numel = x.numel() * reps
    return Cost(flops=out_numel, bytes=element_bytes(x) + out_numel * x.element_size())


TASK = Task(
    id="Fusion/fused_tile_exp",
    difficulty=3,
    entry="fused_tile_exp",
    signature="fused_tile_exp(input, dims, *, out=None)",
    description=(
        "`dims` is a tuple of positive ints. Align `input`'s shape and `dims` on the right, padding the shorter "
        "one with leading 1s (so the result has max(input.dim(), len(dims)) dims, at most 4 here); the result "
        "has size input_size[d] * dims[d] in each dim d, and element (i_0, ..., i_k) equals "
        "exp(input[i_0 % input_size[0], ..., i_k % input_size[k]]), i.e. whole copies of the input laid side by "
        "side, then exponentiated. Return a new contiguous tensor in the input's dtype (exp computed in float32 "
        "for half-precision inputs; overflow gives inf); `out` is always None."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
