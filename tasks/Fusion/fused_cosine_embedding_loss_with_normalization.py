"""L2-normalize two batches of vectors, then the cosine embedding loss between them."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input1, input2, target, margin=0, reduction="mean"):
    a = torch.nn.functional.normalize(input1, p=2, dim=1)
    b = torch.nn.functional.normalize(input2, p=2, dim=1)
    return torch.nn.functional.cosine_embedding_loss(a, b, target, margin=margin, reduction=reduction)


# Per size, the cases seeds rotate through: N, D, margin, reduction. The standard size has one
# configuration, so the timing seeds share it.
CASES = {
    "small": [(64, 100, 0.0, "mean"), (50, 37, 0.2, "sum")],
    "edge": [(3, 1001, 0.5, "none"), (1001, 3, -0.2, "mean")],
    "standard": [(32768, 1536, 0.1, "mean")],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    n, d, margin, reduction = cases[seed % len(cases)]
    a = randn((n, d), gen, torch.float32, mode)
    # input2 = c * input1 + noise with c varying per row: similarities spread over (-1, 1)
    c = torch.rand((n, 1), generator=gen) * 4.0 - 2.0
    b = c * a + randn((n, d), gen, torch.float32, mode)
    target = torch.randint(0, 2, (n,), generator=gen, dtype=torch.int64) * 2 - 1
    return Inputs((a.to(dtype), (0.5 * b).to(dtype), target), {"margin": margin, "reduction": reduction})


def cost(inputs):
    a, b, target = inputs.args
    n = a.shape[0]
    out_bytes = n * a.element_size() if inputs.kwargs.get("reduction") == "none" else a.element_size()
    return Cost(flops=6 * a.numel(), bytes=element_bytes(a, b, target) + out_bytes)


TASK = Task(
    id="Fusion/fused_cosine_embedding_loss_with_normalization",
    difficulty=3,
    entry="fused_cosine_embedding_loss_with_normalization",
    signature=("fused_cosine_embedding_loss_with_normalization(input1: torch.Tensor, input2: torch.Tensor, "
               "target: torch.Tensor, margin: float = 0, reduction: str = 'mean')"),
    description=(
        "`input1` and `input2` are (N, D) batches of vectors and `target` an (N,) int64 tensor of +1 and -1 labels. "
        "Divide every row by max(its L2 norm, 1e-12) (torch.nn.functional.normalize along dim 1), then take the "
        "cosine embedding loss of the normalized rows a_i, b_i: with cos_i = dot(a_i, b_i) / sqrt((|a_i|^2 + "
        "1e-12) * (|b_i|^2 + 1e-12)), the loss of row i is 1 - cos_i where target is 1 and max(0, cos_i - "
        "margin) where it is -1. reduction='none' returns the (N,) losses, 'sum' their total and 'mean' their "
        "average as 0-dim tensors, in the inputs' dtype; accumulate the dot products and norms in float32."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
