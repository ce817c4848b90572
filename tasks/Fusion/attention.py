"""Scaled dot-product attention over (batch, heads, sequence, head_dim) tensors, optionally causal."""

import math

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(q, k, v, causal=False, softmax_scale=None, *, out=None):
    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(q.shape[-1])
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale
    if causal:
        # query i sees keys 0..i (the mask is aligned at the top-left corner when Sq != Sk)
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
    result = torch.matmul(torch.softmax(scores, dim=-1), v)
    if out is not None:
        out.copy_(result)
        return out
    return result


# Per size, the cases seeds rotate through: (B, H, Sq, Sk, D), causal, softmax_scale. The standard
# size has one configuration, so the timing seeds share it.
CASES = {
    "small": [((2, 3, 64, 64, 32), False, None), ((1, 2, 80, 80, 64), True, 0.3)],
    "edge": [((1, 3, 37, 53, 16), True, None), ((2, 1, 19, 7, 24), True, 0.5)],
    "standard": [((2, 16, 4096, 4096, 64), True, None)],     # ~69 GFLOP with the causal mask
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    (b, h, sq, sk, d), causal, scale = cases[seed % len(cases)]
    q = randn((b, h, sq, d), gen, dtype, mode)
    k = randn((b, h, sk, d), gen, dtype, mode)
    v = randn((b, h, sk, d), gen, dtype, mode)
    return Inputs((q, k, v), {"causal": causal, "softmax_scale": scale})


def cost(inputs):
    q, k, v = inputs.args
    sq, d = q.shape[-2], q.shape[-1]
    sk = k.shape[-2]
    heads = q.numel() // (sq * d)
    # query i attends min(i + 1, Sk) keys under the causal mask, all Sk otherwise
    pairs = sum(min(i + 1, sk) for i in range(sq)) if inputs.kwargs.get("causal") else sq * sk
    return Cost(flops=4 * heads * pairs * d, bytes=element_bytes(q, k, v) + element_bytes(q))


TASK = Task(
    id="Fusion/attention",
    difficulty=5,
    entry="attention",
    signature="attention(q, k, v, causal: bool = False, softmax_scale=None, *, out=None)",
    description=(
        "Scaled dot-product attention: `q` is (B, H, Sq, D), `k` and `v` are (B, H, Sk, D). Scores are "
        "q @ k^T * scale with scale = softmax_scale, or 1/sqrt(D) when it is None; with causal=True query i may "
        "only attend keys 0..i (a lower-triangular mask anchored at the top-left corner, also when Sq != Sk; "
        "every query keeps key 0); take the softmax of each score row and return softmax @ v, a new (B, H, Sq, D) "
        "tensor in q's dtype. Do not materialize the Sq x Sk score matrix at large sizes: stream key blocks with "
        "an online softmax, accumulating in float32. For float32 inputs the products need close to full float32 "
        "accuracy (e.g. tl.dot with input_precision='tf32x3'); plain TF32 scores drift beyond the tolerance."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
