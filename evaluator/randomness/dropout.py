"""Checks of dropout outputs: kept values, the drop rate, and masks independent across positions, blocks and calls."""

from __future__ import annotations

import functools
import itertools
from typing import Callable, Sequence

import torch
from scipy import stats

from evaluator.contracts import host_scalars
from evaluator.randomness.distribution import binomial_check
from evaluator.randomness.limits import MIN_SAMPLES, PAIR_SAMPLE, chi2_limits, family_tail, fmt_number
from evaluator.randomness.sampling import spread_indices
from evaluator.randomness.windows import (block_sizes, block_sums, cross, far_lags, padded_spectrum, window_lags,
                                          window_positions)


def _mask_pair_failure(lags: Sequence[int], sums: torch.Tensor, tests: int, describe: Callable) -> str | None:
    """Fisher's exact test at each lag; the sentence for the worst lag, or None when all pass.

    `sums` has a row per lag: pairs dropped together, pairs whose first member is dropped, pairs whose
    second is, pairs (both members informative). Given those margins the first count is
    Hypergeometric under independence. Its normal score screens the lags; the exact tails are
    computed for the most extreme ones (the normal score understates a skewed tail only where it is
    already large).
    """
    import numpy as np

    together, first, second, pairs = (np.rint(sums[:, i].cpu().numpy()) for i in range(4))
    usable = (pairs >= MIN_SAMPLES) & (first > 0) & (second > 0) & (first < pairs) & (second < pairs)
    safe = np.maximum(pairs, 2)
    mean = first * second / safe
    var = mean * (1 - first / safe) * (safe - second) / (safe - 1)
    score = np.where(usable, np.abs(together - mean) / np.sqrt(np.maximum(var, 1e-300)), 0.0)
    suspects = np.argsort(-score)[:64]
    suspects = suspects[score[suspects] > 3]
    if not suspects.size:
        return None
    c, f, s_, m = together[suspects], first[suspects], second[suspects], pairs[suspects]
    tail = np.minimum(stats.hypergeom.sf(c - 1, m, f, s_), stats.hypergeom.cdf(c, m, f, s_))
    worst = int(np.argmin(tail))
    limit = family_tail(tests)
    if tail[worst] >= limit:
        return None
    k = int(np.asarray(lags)[suspects[worst]])
    return describe(k, int(c[worst]), float(mean[suspects[worst]]), int(m[worst]), float(tail[worst]), limit,
                    bool(c[worst] > mean[suspects[worst]]))


def _describe_dependent_positions(what: str, number: int, k: int, c: int, e: float, m: int, tail: float,
                                  limit: float, more: bool) -> str:
    return (f"{what}, call {number}: the dropout mask is not independent across positions: elements {k} apart "
            f"are both dropped {c} times in {m} pairs where independent draws give {fmt_number(e)} (Fisher's exact "
            f"test: tail probability {tail:.2g}, limit {limit:.2g}); "
            + ("the mask repeats itself at that distance (a periodic pattern, rows or blocks that reuse one "
               "stream, or one random number shared by several elements)" if more else "the mask avoids "
               "dropping both (a comb, an alternation, or a sequence that steps by a constant)")
            + ": draw one independent random number per element (tl.rand(seed, offsets), each element its "
              "own offset, a fresh seed per call)")


def _describe_related_calls(what: str, i: int, j: int, k: int, c: int, e: float, m: int, tail: float,
                            limit: float, more: bool) -> str:
    return (f"{what}: the masks of calls {i + 1} and {j + 1} are related"
            + (" at the same positions" if k == 0 else f" (call {j + 1}'s shifted by {k} elements)")
            + f": {c} of {m} pairs dropped by both where independent draws give {fmt_number(e)} (Fisher's exact "
            f"test: tail probability {tail:.2g}, limit {limit:.2g}); draw a fresh seed on every call "
            "instead of moving or transforming the previous call's mask")


class _InformativeWindows:
    """The informative positions (0/1 in float32, flat) in windows of consecutive elements: what the
    pair counts of every mask, and of every two masks, share."""

    def __init__(self, w: torch.Tensor):
        self.w = w
        self.index = window_positions(w.numel(), w.device)
        self.spectrum = self.spectrum_of(w)
        self.pairs = cross(self.spectrum, self.spectrum)  # informative pairs at each shift

    @property
    def width(self) -> int:
        return self.index.shape[1]

    def spectrum_of(self, u: torch.Tensor) -> torch.Tensor:
        return padded_spectrum(u[self.index].to(torch.float64))

    def pair_sums(self, fa: torch.Tensor, fb: torch.Tensor) -> torch.Tensor:
        """Per shift k (indexed as `cross`), the four counts of `_mask_pair_failure` for the pairs
        (a[i], b[i + k]) of the masks whose spectra are `fa` and `fb`."""
        return torch.stack([cross(fa, fb), cross(fa, self.spectrum), cross(self.spectrum, fb), self.pairs], 1)

    def far_pair_sums(self, u: torch.Tensor, far: Sequence[int]) -> list[torch.Tensor]:
        """The same four counts at each far lag, over up to PAIR_SAMPLE sampled pairs (u[i], u[i + lag])."""
        w, n = self.w, self.w.numel()
        rows = []
        for lag in far:
            starts = spread_indices(PAIR_SAMPLE, n - lag, w.device)
            a, b, wa, wb = u[starts], u[starts + lag], w[starts], w[starts + lag]
            rows.append(torch.stack([(a * b).sum(), (a * wb).sum(), (wa * b).sum(), (wa * wb).sum()]).double()[None])
        return rows


def _mask_position_failures(u: torch.Tensor, fu: torch.Tensor, windows: _InformativeWindows, shape: Sequence[int],
                            what: str, number: int) -> list[str]:
    """Pairs of positions of one call's mask at every lag below WINDOW // 2 and at the far lags, and
    its dropped counts per block."""
    lags = window_lags(windows.width, both_signs=False)
    far = far_lags(u.numel(), shape, start=windows.width // 2 + 1)
    sums = torch.cat([windows.pair_sums(fu, fu)[1:len(lags) + 1], *windows.far_pair_sums(u, far)])
    found = _mask_pair_failure(lags + far, sums, len(lags) + len(far),
                               functools.partial(_describe_dependent_positions, what, number))
    failures = [found] if found else []
    return failures + [f"{what}, call {number}: {f}" for f in _mask_block_check(u, windows.w, shape)]


def _related_calls_failures(spectra: Sequence[torch.Tensor], windows: _InformativeWindows, what: str) -> list[str]:
    """Pairs of positions of every two calls' masks at every shift below WINDOW // 2, either way."""
    shifts = window_lags(windows.width, both_signs=True)
    pick = torch.tensor([k % windows.pairs.numel() for k in shifts], dtype=torch.int64, device=windows.w.device)
    failures = []
    for i, j in itertools.combinations(range(len(spectra)), 2):
        found = _mask_pair_failure(shifts, windows.pair_sums(spectra[i], spectra[j])[pick], len(shifts),
                                   functools.partial(_describe_related_calls, what, i, j))
        if found:
            failures.append(found)
    return failures


def mask_independence(masks: Sequence[torch.Tensor], informative: torch.Tensor, shape: Sequence[int],
                      what: str) -> list[str]:
    """Dropout masks (True: dropped) must be independent across positions, rows and calls. Only
    `informative` positions count (there the kept value tells a drop from a keep): pairs of them at
    every lag below WINDOW // 2 (in windows), at the far lags, and between calls at every shift below
    WINDOW // 2; and the dropped counts of blocks."""
    # 0/1 in float32 (exact: no sum below runs over more than 2**24 elements; totals in float64)
    w = informative.reshape(-1).to(torch.float32)
    n = w.numel()
    if n < 2 * MIN_SAMPLES:
        return []
    flats = [(m.reshape(-1) & informative.reshape(-1)).to(torch.float32) for m in masks]
    live, *dropped = host_scalars(w.sum(dtype=torch.float64), *(u.sum(dtype=torch.float64) for u in flats))
    if live < 2 * MIN_SAMPLES or min(dropped) == 0 or max(dropped) == live:
        return []
    windows = _InformativeWindows(w)
    spectra = [windows.spectrum_of(u) for u in flats]
    failures = []
    for number, (u, fu) in enumerate(zip(flats, spectra), start=1):
        failures += _mask_position_failures(u, fu, windows, shape, what, number)
    return failures + _related_calls_failures(spectra, windows, what)


def _dropped_count_spread(u: torch.Tensor, w: torch.Tensor, size: int, rate: torch.Tensor,
                          pq: torch.Tensor) -> list[torch.Tensor]:
    """Over the blocks of `size` elements that hold informative positions: the scaled chi-square of
    their dropped counts against Binomial(I_j, rate), its mean and its variance (device scalars)."""
    d, i = block_sums(u, size).double(), block_sums(w, size).double()
    live = i > 0
    ii = i.clamp_min(1)
    t = torch.where(live, (d - ii * rate).square() / (ii * pq), torch.zeros_like(d)).sum()
    mean = live.sum() - 1
    var = torch.where(live, 2 + (1 - 6 * pq) / (ii * pq), torch.zeros_like(d)).clamp_min(0).sum()
    return [t, mean, var]


def _mask_block_check(u: torch.Tensor, w: torch.Tensor, shape: Sequence[int]) -> list[str]:
    """Dropped counts per block of consecutive elements: D_j of I_j informative positions, against
    Binomial(I_j, p) for the common rate p (a scaled chi-square, both tails)."""
    sizes = block_sizes(u.numel(), shape, min_blocks=16)
    if not sizes:
        return []
    rate = u.sum(dtype=torch.float64) / w.sum(dtype=torch.float64)
    pq = (rate * (1 - rate)).clamp_min(1e-300)
    values = host_scalars(*(scalar for size in sizes for scalar in _dropped_count_spread(u, w, size, rate, pq)))
    for k, size in enumerate(sizes):
        t, mean, var = values[3 * k:3 * k + 3]
        if mean < 15 or var <= 0:
            continue
        scale, dof = var / (2 * mean), 2 * mean * mean / var  # Satterthwaite: scale * chi2(dof) with that mean and variance
        lower, upper = chi2_limits(round(dof, 3), len(sizes), round(scale, 6))
        if t < lower or t > upper:
            how = ("too regular (a periodic pattern, not independent draws)" if t < lower else
                   "too unevenly (elements dropped together in clumps or whole rows)")
            return [f"the number of dropped elements per block of {size} varies {how}: statistic {fmt_number(t)}, "
                    f"allowed {fmt_number(lower)} to {fmt_number(upper)} for {int(mean) + 1} blocks"]
    return []


def _kept_value_failures(got: torch.Tensor, dropped: torch.Tensor, expected: torch.Tensor, tolerance: torch.Tensor,
                         what: str, number: int) -> list[str]:
    """Every element not dropped must match its kept value within `tolerance`."""
    wrong = ~dropped & ((got - expected).abs() > tolerance)
    if not bool(wrong.any()):
        return []
    i = int(torch.nonzero(wrong.reshape(-1))[0])
    return [f"{what}, call {number}: {int(wrong.sum())} kept elements are neither 0 nor the "
            f"undropped value scaled by 1/(1-p) (first at flat index {i}: expected "
            f"{float(expected.reshape(-1)[i]):.6g}, got {float(got.reshape(-1)[i]):.6g})"]


def _drop_rate_failures(mask: torch.Tensor, informative: torch.Tensor, p: float, what: str, number: int) -> list[str]:
    """The informative positions dropped by `mask`: none with p = 0, else a share consistent with p."""
    zeros, trials = int(mask.sum()), int(informative.sum())
    if p == 0 and zeros:
        return [f"{what}, call {number}: {zeros} elements were dropped with p = 0"]
    if trials >= MIN_SAMPLES:
        return [f"{message} (call {number})"
                for message in binomial_check(zeros, trials, p, f"{what}: zeroed elements")]
    return []


def _same_masks_failures(masks: Sequence[torch.Tensor], p: float, what: str) -> list[str]:
    """The first two calls must not drop exactly the same elements."""
    if p > 0 and len(masks) > 1 and int(masks[0].sum()) >= MIN_SAMPLES and bool(torch.equal(masks[0], masks[1])):
        return [f"{what}: two calls dropped exactly the same elements; draw a fresh seed on every call"]
    return []


def dropout_checks(runs: Sequence[torch.Tensor], kept_value: torch.Tensor, p: float, eps: float,
                   what: str = "dropout") -> list[str]:
    """Outputs of a dropout stage (or anything after it that maps 0 to 0).

    `kept_value` is what each element must be when it is kept: the no-dropout value divided by
    1 - p, computed by the task in float64. Every element of every run must be 0 or match
    `kept_value` within eps * (|kept| + rms(kept)); among elements whose kept value is clearly
    non-zero, the share of zeros must be consistent with p (binomial test); and two calls must
    drop different elements. With p == 0 nothing may be dropped.
    """
    failures: list[str] = []
    expected = kept_value.to(torch.float64)
    scale = float(expected.square().mean().sqrt()) if expected.numel() else 0.0
    informative = expected.abs() > 1e-3 * max(scale, 1e-30)
    tolerance = eps * (expected.abs() + scale)
    masks = []
    for number, run in enumerate(runs, start=1):
        got = run.to(device=expected.device, dtype=torch.float64)
        if got.shape != expected.shape:
            return [f"{what}: output shape {tuple(got.shape)} where {tuple(expected.shape)} was expected"]
        dropped = got == 0
        failures += _kept_value_failures(got, dropped, expected, tolerance, what, number)
        failures += _drop_rate_failures(dropped & informative, informative, p, what, number)
        masks.append(dropped & informative)
    failures += _same_masks_failures(masks, p, what)
    if not failures and 0 < p < 1:
        failures += mask_independence(masks, informative, tuple(expected.shape), what)
    return failures
