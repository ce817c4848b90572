"""Embedding lookup (with optional max-norm rescaling of the looked-up rows), add a tensor, then tanh."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input_indices, weight, other, *, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False, out=None):
    # torch's own max_norm renormalizes the rows of `weight` in place, and on a GPU a row looked up
    # more than once can be rescaled by two blocks at once (a partly double-scaled row, seen under
    # load); here only the looked-up rows are rescaled, each on its own, and `weight` is left alone.
    e = torch.nn.functional.embedding(input_indices, weight, padding_idx=padding_idx,
                                      scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)
    if max_norm is not None:
        norm = torch.linalg.vector_norm(e, ord=norm_type, dim=-1, keepdim=True)
        e = e * torch.where(norm > max_norm, max_norm / (norm + 1e-7), 1.0)
    result = torch.tanh(torch.add(e, other))
    if out is not None:
        out.copy_(result)
        return out
    return result


# (index shape, vocabulary, dim, other's shape: "full" or a shape that broadcasts, padding_idx,
# max_norm, norm_type) per (size, seed); the max_norm values sit near the typical row norm, so some
# looked-up rows are rescaled and some are not. The standard size has one configuration.
CASES = {
    "small": [((8, 20), 50, 64, (64,), 0, None, 2.0), ((30,), 40, 48, "full", None, 3.5, 2.0)],
    "edge": [((3, 1, 7), 11, 1001, (1, 1001), None, 400.0, 1.0), ((1,), 1, 3, "full", None, None, 2.0)],
    "standard": [((64, 1024), 32000, 1024, (1024, 1024), None, None, 2.0)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    index_shape, vocab, dim, other_shape, padding_idx, max_norm, norm_type = cases[seed % len(cases)]
    indices = torch.randint(0, vocab, index_shape, generator=gen, dtype=torch.int64)
    if padding_idx is not None:
        indices.view(-1)[::5] = padding_idx  # the padding row is looked up like any other
    weight = randn((vocab, dim), gen, dtype, mode, scale=0.5)
    shape = index_shape + (dim,) if other_shape == "full" else other_shape
    other = randn(shape, gen, dtype, mode, scale=0.5)
    kwargs = {"padding_idx": padding_idx, "max_norm": max_norm, "norm_type": norm_type}
    return Inputs((indices, weight, other), kwargs)


def cost(inputs):
    indices, weight, other = inputs.args
    vocab, dim = weight.shape
    out_numel = indices.numel() * dim
    rows = torch.unique(indices).numel() * dim  # each distinct looked-up row is read once at least
    return Cost(flops=3 * out_numel, bytes=element_bytes(indices, other) + (rows + out_numel) * weight.element_size())


TASK = Task(
    id="Fusion/fused_embedding_add_tanh",
    difficulty=3,
    entry="fused_embedding_add_tanh",
    signature=("fused_embedding_add_tanh(input_indices, weight, other, *, padding_idx=None, max_norm=None, "
               "norm_type=2.0, scale_grad_by_freq=False, sparse=False, out=None)"),
    description=(
        "Look up rows of the (V, D) table `weight` with the int64 tensor `input_indices` of any shape, giving E "
        "of shape indices.shape + (D,); add `other` (same dtype as weight, broadcastable to E's shape) and "
        "return tanh(E + other) as a new tensor in weight's dtype. When `max_norm` is given, a looked-up row "
        "whose norm_type-norm (sum |w|**norm_type) ** (1 / norm_type) exceeds max_norm is multiplied by "
        "max_norm / (norm + 1e-7) before the addition; `weight` itself must not be modified. padding_idx, "
        "scale_grad_by_freq and sparse only affect gradients (the padding row is looked up as stored); `out` "
        "stays None. Compute in float32 for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
