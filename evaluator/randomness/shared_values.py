"""The shared-values test: do two parts of an output (halves, alternate blocks) or two calls hold the same values?"""

from __future__ import annotations

import math
from typing import Sequence

import torch

from evaluator.contracts import host_scalars
from evaluator.randomness.limits import BLOCKS, MIN_SAMPLES, SHARED_SAMPLE, fmt_number, normal_limit
from evaluator.randomness.sampling import row_strides

Sides = tuple[torch.Tensor, torch.Tensor]  # per distinct value (or bit pattern), its count on either side of a split


def two_way_splits(n: int, shape: Sequence[int]) -> list[tuple[str, int]]:
    """Ways to cut range(n) in two: ("the two halves", 0), then alternate blocks of B (B > 0)."""
    splits = [("the first and second halves of the output", 0)] if n >= 2 * MIN_SAMPLES else []
    for size in sorted({*BLOCKS, *row_strides(shape)}):
        if MIN_SAMPLES <= size and 4 * size <= min(n, SHARED_SAMPLE):
            splits.append((f"even and odd blocks of {size} elements", size))
    return splits


def _split_side(how: int, number: int, position: torch.Tensor, total: int) -> torch.Tensor:
    """Which side of the split `how` each position of part `number` falls on."""
    if how == -1:
        return torch.full_like(position, number == 1, dtype=torch.bool)
    if how == 0:
        return position >= total // 2
    return (position // how) % 2 == 1


def _narrow_sides(parts: Sequence[torch.Tensor], splits: Sequence[tuple[str, int]]) -> list[Sides]:
    """Per split, the counts of each 16-bit pattern on either side. The halves and the two calls are
    counted over every element (a copy may sit anywhere); alternate blocks inside windows of
    consecutive elements, about SHARED_SAMPLE of them (a block's copy sits in the next block)."""
    size = 1 << 16
    keys = [bits.to(torch.int32) & 0xFFFF for bits in parts]
    total = keys[0].numel()
    index = None
    sides = []
    for _, how in splits:
        if how == -1:
            sides.append(tuple(torch.bincount(k, minlength=size) for k in keys[:2]))
        elif how == 0:
            sides.append((torch.bincount(keys[0][:total // 2], minlength=size),
                          torch.bincount(keys[0][total // 2:], minlength=size)))
        else:
            if index is None:
                index = _regions(total, keys[0].device)
            side = ((index // how) % 2).to(torch.int32)
            counts = torch.bincount((keys[0][index] + side * size).reshape(-1), minlength=2 * size)
            sides.append((counts[:size], counts[size:]))
    return [(a.to(torch.float64), b.to(torch.float64)) for a, b in sides]


def _regions(n: int, device: torch.device) -> torch.Tensor:
    """Positions (regions, width) of up to SHARED_SAMPLE elements in a few runs of consecutive
    positions spread over range(n), each run starting at a multiple of 65536 * 2."""
    if n <= SHARED_SAMPLE:
        return torch.arange(n, dtype=torch.int64, device=device)[None]
    width, align = SHARED_SAMPLE // 4, 2 * max(BLOCKS)  # align divides width: the runs never overlap
    steps = (n - width) // align  # at least 3 * width // align, since n > 4 * width
    starts = [k * steps // 3 * align for k in range(4)]
    return torch.tensor(starts, dtype=torch.int64, device=device)[:, None] + torch.arange(
        width, dtype=torch.int64, device=device)


def _wide_sides(parts: Sequence[tuple[torch.Tensor, torch.Tensor]], top: float, windowed: bool,
                splits: Sequence[tuple[str, int]]) -> list[Sides] | None:
    """Per split, the counts of each distinct value on either side, among the values below `top`
    when `windowed` (else all of them); None when fewer than 2 * MIN_SAMPLES values are counted."""
    positions = [torch.nonzero(values < top).reshape(-1) if windowed else
                 torch.arange(values.numel(), device=values.device) for _, values in parts]
    key = torch.cat([bits[picked] for (bits, _), picked in zip(parts, positions)])
    if key.numel() < 2 * MIN_SAMPLES:
        return None
    _, inverse = torch.unique(key, return_inverse=True)
    size = int(inverse.max()) + 1
    total = parts[0][0].numel()
    sides = []
    for _, how in splits:
        side = torch.cat([_split_side(how, number, position, total) for number, position in enumerate(positions)])
        counts = torch.bincount(inverse + side * size, minlength=2 * size).to(torch.float64)
        sides.append((counts[:size], counts[size:]))
    return sides


def _counted_sides(parts: Sequence[tuple[torch.Tensor, torch.Tensor]], low: float, high: float,
                   splits: Sequence[tuple[str, int]]) -> tuple[list[Sides] | None, float]:
    """Per split, the counts of each value on either side (None when too few are counted), and the
    top of the window of values counted: half-precision bit patterns all, wider values those below
    a top that leaves about SHARED_SAMPLE of them."""
    if parts[0][0].element_size() <= 2:
        return _narrow_sides([bits for bits, _ in parts], splits), high
    fraction = min(1.0, SHARED_SAMPLE / max(sum(b.numel() for b, _ in parts), 1))
    top = low + fraction * (high - low)
    return _wide_sides(parts, top, fraction < 1, splits), top


def _sharing_statistics(a: torch.Tensor, b: torch.Tensor) -> list[torch.Tensor]:
    """Device scalars of the two-sample chi-square of one split, from the counts of each value on
    either side: the statistic, its mean and variance under independence, how many values occur on
    both sides, how many distinct values there are, and how many values in all."""
    t = a + b
    m = t.sum()
    seen = t > 0
    q = a.sum() / m.clamp_min(1)
    qq = (q * (1 - q)).clamp_min(1e-300)
    tt = t.clamp_min(1)
    d = torch.where(seen, (a - tt * q).square() / (tt * qq), torch.zeros_like(t)).sum()
    mean = torch.where(seen, (m - t) / (m - 1).clamp_min(1), torch.zeros_like(t)).sum()
    var = torch.where(seen, 2 + (1 - 6 * qq) / (tt * qq), torch.zeros_like(t)).clamp_min(0).sum()
    return [d, mean, var, ((a > 0) & (b > 0)).sum(), seen.sum(), m]


def shared_values(parts: Sequence[tuple[torch.Tensor, torch.Tensor]], low: float, high: float,
                  splits: Sequence[tuple[str, int]]) -> list[str]:
    """Do two parts of the output (or two calls) hold the same values? `parts` are (bits, values) of
    flat tensors of one dtype.

    Each distinct value occurs some number of times; under independence its occurrences fall on
    either side of a split the way a random draw would place them (hypergeometric), whatever the
    generator's grid, so a two-sample chi-square over the distinct values has a known mean. A side
    that permutes or copies the other puts every value on both sides in equal numbers, far below
    that mean. Half-precision outputs are counted by bit pattern (their few distinct values are all
    needed); wider ones only in a window at the bottom of the range holding about SHARED_SAMPLE
    values (a copy's values lie in the window as the original's do). `splits`: (description, how)
    with how = 0 for the two halves of each part, B > 0 for alternate blocks of B elements, -1 for
    part 0 against part 1.
    """
    sides, top = _counted_sides(parts, low, high, splits)
    if sides is None:
        return []
    values = host_scalars(*(scalar for a, b in sides for scalar in _sharing_statistics(a, b)))
    limit = normal_limit(len(splits))
    sampled = "" if top >= high else f" (those below {fmt_number(top)})"
    failures = []
    for i, (name, _) in enumerate(splits):
        d, mean, var, both, distinct, m = values[6 * i:6 * i + 6]
        if m < 2 * MIN_SAMPLES:
            continue
        z = (mean - d) / math.sqrt(var + 1)
        if z > limit:
            failures.append(
                f"{name} share their values: of {int(distinct)} distinct values{sampled}, {int(both)} occur "
                f"on both sides, spread between them {fmt_number(z)} standard deviations more evenly than independent "
                f"draws allow (limit {fmt_number(limit)}); one side is a permutation or copy of the other (the same seed "
                "and counters read again in another order): every element needs fresh random bits")
            if len(failures) >= 2:
                break
    return failures
