"""Checks for a broken random stream: values repeating at fixed distances, runs of values reappearing anywhere."""

from __future__ import annotations

import math
from typing import Sequence

import torch

from evaluator.contracts import host_scalars
from evaluator.randomness.limits import LAGS, MIN_SAMPLES, SLACK_COUNT, SUBSAMPLE, allowed_count, fmt_number
from evaluator.randomness.sampling import (bit_patterns, collision_probability, flat_values, raw_bits, row_strides,
                                           spread_indices, subsample)

REPEAT_CHANCE = 1e-3  # chance that independent draws repeat even one sampled window
MAX_WINDOW = 64       # longer windows are not hashed: the stream takes too few values to test this way


def repetition_checks(t: torch.Tensor, collision: float | None = None, lags: Sequence[int] = LAGS) -> list[str]:
    """Values must not repeat at fixed distances in memory order more often than chance allows.

    Programs that all use the same seed (or the same offsets) write the same sequence into every
    block, so x[i] == x[i + block] everywhere; rows filled from the same stream repeat at the row
    length. Checked at the distances in `lags` and at the stride of every dimension (row starts).
    `collision` is the chance that two independent values are equal (estimated when None).
    """
    n = t.numel()
    if n < 2:
        return []
    if collision is None:
        collision = collision_probability(subsample(flat_values(t)))
    x = raw_bits(t)
    lags = sorted(d for d in {*lags, *row_strides(t.shape)} if 0 < d < n)
    counts = host_scalars(*(torch.count_nonzero(x[lag:] == x[:-lag]) for lag in lags))
    failures = []
    for lag, equal in zip(lags, map(int, counts)):
        pairs = n - lag
        if equal > allowed_count(pairs, collision):
            failures.append(
                f"values repeat at a distance of {lag} elements: x[i] == x[i+{lag}] for {equal} of {pairs} "
                f"positions (independent draws give about {fmt_number(collision * pairs)}); blocks or rows reuse the "
                "same random stream (give every program a distinct seed or distinct offsets)")
            if len(failures) >= 3:
                break
    return failures


def _window_length(collision: float, samples: int) -> int | None:
    """The number k >= 2 of consecutive values per window that makes a repeat among `samples`
    windows of independent draws about REPEAT_CHANCE likely; None above MAX_WINDOW or when every
    draw is equal."""
    if collision >= 1.0:
        return None
    pairs = samples * (samples - 1) / 2
    k = max(2, math.ceil(math.log(REPEAT_CHANCE / pairs) / math.log(collision)))
    return k if k <= MAX_WINDOW else None


def _repeated_windows(bits: torch.Tensor, starts: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Starts (first, second) of the pairs of windows of `k` values at `starts` that hold the same values."""
    digest = torch.zeros(starts.numel(), dtype=torch.int64, device=bits.device)
    for j in range(k):  # polynomial hash, wrapping modulo 2**64
        digest = digest * 1000003 + bits[starts + j] * 0x9E3779B1 + j
    order = torch.argsort(digest)
    sorted_digest = digest[order]
    dup = torch.nonzero(sorted_digest[1:] == sorted_digest[:-1]).reshape(-1)
    first, second = starts[order[dup]], starts[order[dup + 1]]
    offsets = torch.arange(k, dtype=torch.int64, device=bits.device)
    same = (bits[first[:, None] + offsets] == bits[second[:, None] + offsets]).all(dim=1)
    return first[same], second[same]


def repeated_windows_check(t: torch.Tensor, collision: float | None = None, limit: int = SUBSAMPLE) -> list[str]:
    """No run of consecutive values may reappear elsewhere in the output, at any distance.

    Windows of k consecutive elements are taken at up to `limit` positions spread over the tensor,
    with k chosen so that independent draws would make even one repeated window unlikely (chance
    about REPEAT_CHANCE). Catches copies of one block into others whatever the block size (programs
    seeded identically), unwritten stretches, and short periods, where the fixed-distance test cannot.
    """
    bits = bit_patterns(t)
    n = bits.numel()
    if n < MIN_SAMPLES:
        return []
    if collision is None:
        collision = collision_probability(subsample(flat_values(t)))
    k = _window_length(collision, min(limit, n))
    if k is None or n < 2 * k:
        return []
    starts = spread_indices(min(limit, n), n - k + 1, bits.device)
    first, second = _repeated_windows(bits, starts, k)
    count = first.numel()
    if count <= SLACK_COUNT:
        return []
    a, b = sorted((int(first[0]), int(second[0])))
    return [f"runs of {k} consecutive values repeat: {count} of {starts.numel()} sampled windows reappear elsewhere "
            f"in the output (e.g. elements {a}..{a + k - 1} equal elements {b}..{b + k - 1}, {b - a} apart); parts "
            "of the output copy each other (the same seed and offsets in several programs, or unwritten elements)"]
