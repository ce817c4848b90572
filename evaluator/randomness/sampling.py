"""How the random-output checks read an output: flat values, bit patterns, spread samples, the chance of a tie."""

from __future__ import annotations

from typing import Sequence

import torch

from evaluator.randomness.limits import COLLISION_FLOOR, HASH_STRIDE, SUBSAMPLE


def flat_values(t: torch.Tensor) -> torch.Tensor:
    """The elements of `t` as a flat float64 tensor on its own device."""
    return t.detach().reshape(-1).to(torch.float64)


def spread_indices(count: int, n: int, device: torch.device) -> torch.Tensor:
    """`count` indices into range(n), all of them when count >= n, else spread by the hash stride."""
    if count >= n:
        return torch.arange(n, dtype=torch.int64, device=device)
    if n % HASH_STRIDE:
        return (torch.arange(count, dtype=torch.int64, device=device) * HASH_STRIDE) % n
    return torch.arange(count, dtype=torch.int64, device=device) * (n // count)  # the stride divides n


def subsample(x: torch.Tensor, limit: int = SUBSAMPLE) -> torch.Tensor:
    """At most `limit` elements of the flat tensor `x`, spread over all of it, always the same ones,
    on its own device (every test of the sample runs there; a few numbers come back to the host)."""
    n = x.numel()
    if n <= limit:
        return x
    return x[spread_indices(limit, n, x.device)]


def value_counts(sample: torch.Tensor) -> tuple[int, float]:
    """How many distinct values the sample holds, and the estimated chance that two independent
    draws are equal: the unbiased sum c(c-1) / (s(s-1)) over the counts c of the distinct values,
    floored at COLLISION_FLOOR so that streams with very many distinct values still get a sensible bound."""
    s = sample.numel()
    if s < 2:
        return s, 1.0
    _, counts = torch.unique(sample, return_counts=True)  # its size is known on the host once it returns
    counts = counts.to(torch.float64)
    equal_pairs = float((counts * (counts - 1)).sum())
    return counts.numel(), max(equal_pairs / (s * (s - 1)), COLLISION_FLOOR)


def collision_probability(sample: torch.Tensor) -> float:
    """Estimated chance that two independent draws are equal, from a sample of the output."""
    return value_counts(sample)[1]


def raw_bits(t: torch.Tensor) -> torch.Tensor:
    """The elements of `t`, flat, as integers of the same width (equal bit patterns compare equal)."""
    x = t.detach().reshape(-1)
    if x.is_floating_point():
        x = x.view({1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()])
    return x


def bit_patterns(t: torch.Tensor) -> torch.Tensor:
    """The elements of `t` as flat int64 bit patterns."""
    return raw_bits(t).to(torch.int64)


def row_strides(shape: Sequence[int]) -> list[int]:
    """Strides of dims d-2 .. 0 of a contiguous tensor of `shape`: where its rows and planes start."""
    strides, stride = [], 1
    for size in reversed(tuple(shape)[1:]):
        stride *= size
        strides.append(stride)
    return strides
