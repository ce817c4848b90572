"""Statistical checks for the outputs of random ops, for `Statistical(check=...)` contracts.

Random outputs are never compared with torch's own random stream. Instead a case is judged by
distribution tests on each run (range, Kolmogorov-Smirnov, mean and variance), by tests that catch
a broken random stream (values repeating at fixed distances, which is what programs seeded
identically produce; runs of consecutive values reappearing anywhere; too few distinct values),
by independence tests within each run and between the runs (see "Independence" below: correlation
at every lag of a window, joint histograms at block, row and half distances, parts or calls that
share their values, block sums that vary too much or too little, and for dropout masks Fisher's
exact test of positions dropped together, within a call and between calls), and by comparing the
runs with each other (two calls must not return the same numbers). Every function returns a list
of failure sentences written for the author of the kernel; an empty list means the check passed.

Thresholds are set so that a correct generator almost never fails: the KS test at p = 1e-6 (a
case runs a few KS tests and a suite many cases), moments within 6 standard errors, repetition
counts within 6 standard deviations (plus a small constant) of what independent draws give, where
the chance that two draws are equal is estimated from the output itself. Each family of
independence tests (all lags of one output, all splits, all block sizes, the lags between two
calls) fails a correct generator with probability INDEPENDENCE_P = 1e-7, Bonferroni-corrected over
the tests in the family, so that the half dozen families of a case stay near 1e-6 together.
Half-precision outputs take only a grid of values; the tests allow for that discretization (one
grid step near the top of the range), so both truncating to the grid and rounding to nearest pass;
the independence tests compare the output with itself (observed margins, its own distinct values)
and need no model of the grid. Tests that need many samples are skipped below MIN_SAMPLES elements;
range, dtype, shape and finiteness are always checked. Large tensors are tested on a fixed
subsample of SUBSAMPLE elements spread over the whole tensor (KS, collision estimate, windows), on
windows of consecutive elements and sampled pairs (independence, at most WINDOW_SAMPLE elements and
PAIR_SAMPLE pairs per lag), and on the values in a narrow window of the range (shared values, about
SHARED_SAMPLE of them); moments, fixed-distance repeats and block sums use every element.

What these checks cannot see: a generator that repeats itself across cases (two fixed seeds taken
in turn, say), since a check receives the runs of one case only.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Sequence

import torch
from scipy import stats  # with the task modules, not in the middle of a judgement holding the GPU lock

from evaluator.contracts import host_scalars

KS_P_VALUE = 1e-6
SIGMAS = 6.0
SLACK_COUNT = 5.0             # extra equal pairs tolerated on top of the binomial bound
MIN_SAMPLES = 32              # fewer elements: only range, dtype, shape and finiteness
SUBSAMPLE = 1 << 20           # the KS test and the collision estimate use at most this many values
COLLISION_FLOOR = 2.0 ** -20  # lower bound on the collision probability assumed for any stream
MIN_DISTINCT_FRACTION = 0.5   # float32/float64 outputs: distinct values in the subsample
LAGS = (1, 2, 3, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)
_HASH_STRIDE = 2654435761     # a prime: index i of the subsample reads element (i * stride) mod n

# Independence tests (see "Independence" below). Each family of tests of one output, or of one pair
# of calls, fails a correct generator with probability about INDEPENDENCE_P (Bonferroni within the
# family), so that all of them together stay near the KS test's 1e-6 per case.
INDEPENDENCE_P = 1e-7
WINDOW = 8192                 # correlations at every lag below WINDOW // 2, inside windows of this many elements
WINDOW_SAMPLE = 1 << 20       # at most this many elements in those windows
PAIR_SAMPLE = 1 << 16         # pairs (x[i], x[i + lag]) sampled per far lag
SHARED_SAMPLE = 1 << 20       # values in the value window the shared-values test sorts
BLOCKS = (64, 256, 1024, 4096, 16384, 65536)  # block lengths of the block-sum tests and the block splits


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def spacing_below(value: float, dtype: torch.dtype) -> float:
    """Gap between `value` and the next representable `dtype` number below it (0 for non-floats)."""
    if not dtype.is_floating_point or value == 0:
        return 0.0
    eps = torch.finfo(dtype).eps
    exponent = math.ceil(math.log2(abs(value)))
    return eps * 2.0 ** (exponent - 1)


def flat_values(t: torch.Tensor) -> torch.Tensor:
    """The elements of `t` as a flat float64 tensor on its own device."""
    return t.detach().reshape(-1).to(torch.float64)


def subsample(x: torch.Tensor, limit: int = SUBSAMPLE) -> torch.Tensor:
    """At most `limit` elements of the flat tensor `x`, spread over all of it, always the same ones,
    on its own device (every test of the sample runs there; a few numbers come back to the host)."""
    n = x.numel()
    if n <= limit:
        return x
    if n % _HASH_STRIDE:
        index = (torch.arange(limit, dtype=torch.int64, device=x.device) * _HASH_STRIDE) % n
    else:  # the stride divides n: fall back to evenly spaced indices
        index = torch.arange(limit, dtype=torch.int64, device=x.device) * (n // limit)
    return x[index]


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


def allowed_count(trials: int, p: float) -> float:
    """Most events (e.g. equal pairs) that `trials` independent tries of probability `p` plausibly give."""
    return p * trials + SIGMAS * math.sqrt(max(p * (1 - p) * trials, 0.0)) + SLACK_COUNT


def binomial_check(successes: int, trials: int, p: float, what: str) -> list[str]:
    """`successes` out of `trials` must be within SIGMAS standard deviations of p * trials.

    For example the fraction of dropped elements of a dropout mask: binomial_check(zeros, n, p,
    "zeroed elements").
    """
    if trials == 0:
        return []
    sd = math.sqrt(max(p * (1 - p) * trials, 0.0))
    if abs(successes - p * trials) > SIGMAS * sd + 1:
        return [f"{what}: {successes} of {trials} ({_fmt(successes / trials)}), expected a fraction of "
                f"{_fmt(p)} (allowed {SIGMAS:g} standard deviations, {_fmt(SIGMAS * sd / trials)})"]
    return []


@functools.lru_cache(maxsize=64)
def ks_critical_distance(samples: int) -> float:
    """The Kolmogorov-Smirnov distance that `samples` draws of the right distribution exceed with
    probability KS_P_VALUE."""
    return float(stats.kstwo.isf(KS_P_VALUE, samples))


def ks_uniform(sample: torch.Tensor, low: float, high: float, slack: float = 0.0) -> list[str]:
    """Kolmogorov-Smirnov test of the sample against U(low, high), on the sample's device.

    `slack` is added to the critical distance: the discretization of the output dtype, in units of
    the CDF (a grid of step h moves the empirical CDF by up to h / (high - low)).
    """
    s = sample.numel()
    if s < MIN_SAMPLES:
        return []
    values = sample.reshape(-1).to(torch.float64).sort().values
    cdf = ((values - low) / (high - low)).clamp(0.0, 1.0)
    ranks = torch.arange(1, s + 1, dtype=torch.float64, device=values.device)
    gaps = torch.maximum(ranks / s - cdf, cdf - (ranks - 1) / s)  # the empirical CDF's steps against the CDF
    worst = gaps.argmax()
    distance, location = host_scalars(gaps[worst], values[worst])
    allowed = ks_critical_distance(s) + slack
    if distance <= allowed:
        return []
    return [f"the values are not uniform on [{_fmt(low)}, {_fmt(high)}): Kolmogorov-Smirnov distance "
            f"{_fmt(distance)} over {s} samples (allowed {_fmt(allowed)}; the empirical CDF "
            f"deviates most near {_fmt(location)})"]


def moment_checks(x: torch.Tensor, low: float, high: float, slack: float = 0.0) -> list[str]:
    """Mean and variance of the flat float64 tensor `x` against U(low, high), within SIGMAS standard errors.

    `slack` (in the units of the values) allows for the discretization of the output dtype.
    """
    n = x.numel()
    if n < MIN_SAMPLES:
        return []
    width = high - low
    failures = []
    mean, var = host_scalars(x.mean(), x.var(unbiased=False))
    expected_mean = (low + high) / 2
    mean_tol = SIGMAS * width / math.sqrt(12 * n) + slack
    if abs(mean - expected_mean) > mean_tol:
        failures.append(f"mean {_fmt(mean)} where U({_fmt(low)}, {_fmt(high)}) gives {_fmt(expected_mean)} "
                        f"(allowed +-{_fmt(mean_tol)} for {n} samples)")
    expected_var = width ** 2 / 12
    var_tol = SIGMAS * width ** 2 / math.sqrt(180 * n) + slack * width
    if abs(var - expected_var) > var_tol:
        failures.append(f"variance {_fmt(var)} where U({_fmt(low)}, {_fmt(high)}) gives {_fmt(expected_var)} "
                        f"(allowed +-{_fmt(var_tol)} for {n} samples)")
    return failures


def _raw_bits(t: torch.Tensor) -> torch.Tensor:
    """The elements of `t`, flat, as integers of the same width (equal bit patterns compare equal)."""
    x = t.detach().reshape(-1)
    if x.is_floating_point():
        x = x.view({1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()])
    return x


def _bits(t: torch.Tensor) -> torch.Tensor:
    """The elements of `t` as flat int64 bit patterns."""
    return _raw_bits(t).to(torch.int64)


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
    x = _raw_bits(t)
    distances = set(lags)
    stride = 1
    for size in reversed(t.shape[1:]):  # strides of dims 0 .. d-2: where rows and planes start
        stride *= size
        distances.add(stride)
    failures = []
    lags = sorted(d for d in distances if 0 < d < n)
    counts = host_scalars(*(torch.count_nonzero(x[lag:] == x[:-lag]) for lag in lags))
    for lag, equal in zip(lags, map(int, counts)):
        pairs = n - lag
        if equal > allowed_count(pairs, collision):
            failures.append(
                f"values repeat at a distance of {lag} elements: x[i] == x[i+{lag}] for {equal} of {pairs} "
                f"positions (independent draws give about {_fmt(collision * pairs)}); blocks or rows reuse the "
                "same random stream (give every program a distinct seed or distinct offsets)")
            if len(failures) >= 3:
                break
    return failures


def repeated_windows_check(t: torch.Tensor, collision: float | None = None, limit: int = SUBSAMPLE) -> list[str]:
    """No run of consecutive values may reappear elsewhere in the output, at any distance.

    Windows of k consecutive elements are taken at up to `limit` positions spread over the tensor,
    with k chosen so that independent draws would make even one repeated window unlikely (chance
    about 1e-3). Catches copies of one block into others whatever the block size (programs seeded
    identically), unwritten stretches, and short periods, where the fixed-distance test cannot.
    """
    bits = _bits(t)
    n = bits.numel()
    if n < MIN_SAMPLES:
        return []
    if collision is None:
        collision = collision_probability(subsample(flat_values(t)))
    s = min(limit, n)
    pairs = s * (s - 1) / 2
    if collision >= 1.0:
        return []
    k = max(2, math.ceil(math.log(1e-3 / pairs) / math.log(collision)))
    if k > 64 or n < 2 * k:
        return []
    positions = n - k + 1
    s = min(s, positions)
    if s == positions:
        starts = torch.arange(s, dtype=torch.int64, device=bits.device)
    elif positions % _HASH_STRIDE:
        starts = (torch.arange(s, dtype=torch.int64, device=bits.device) * _HASH_STRIDE) % positions
    else:
        starts = torch.arange(s, dtype=torch.int64, device=bits.device) * (positions // s)
    digest = torch.zeros(s, dtype=torch.int64, device=bits.device)
    for j in range(k):  # polynomial hash, wrapping modulo 2**64
        digest = digest * 1000003 + bits[starts + j] * 0x9E3779B1 + j
    order = torch.argsort(digest)
    sorted_digest = digest[order]
    dup = torch.nonzero(sorted_digest[1:] == sorted_digest[:-1]).reshape(-1)
    if dup.numel() == 0:
        return []
    first, second = order[dup], order[dup + 1]
    offsets = torch.arange(k, dtype=torch.int64, device=bits.device)
    same = (bits[starts[first][:, None] + offsets] == bits[starts[second][:, None] + offsets]).all(dim=1)
    count = int(same.sum())
    if count <= SLACK_COUNT:
        return []
    i = int(torch.nonzero(same).reshape(-1)[0])
    a, b = sorted((int(starts[first[i]]), int(starts[second[i]])))
    return [f"runs of {k} consecutive values repeat: {count} of {s} sampled windows reappear elsewhere in the "
            f"output (e.g. elements {a}..{a + k - 1} equal elements {b}..{b + k - 1}, {b - a} apart); parts of "
            "the output copy each other (the same seed and offsets in several programs, or unwritten elements)"]


def distinct_fraction_check(distinct: int, s: int, dtype: torch.dtype) -> list[str]:
    """Float32/float64 outputs must take many distinct values (catches repeated blocks of any size):
    `distinct` of `s` sampled values."""
    if s < MIN_SAMPLES or not dtype.is_floating_point or torch.finfo(dtype).bits < 32:
        return []
    if distinct < MIN_DISTINCT_FRACTION * s:
        return [f"only {distinct} distinct values among {s} samples of a {str(dtype).removeprefix('torch.')} "
                "output: the random stream repeats or has too few random bits"]
    return []


# Independence ---------------------------------------------------------------------------------
# The distribution tests above see each value alone; a stream whose values are right one by one can
# still be far from independent: half the numbers mirrored (1 - u) or shuffled into the other half,
# blocks that are functions of each other, calls that are shifts or permutations of each other, a
# dropout mask that is a comb. The tests below look for dependence between positions and calls:
#   - correlation at every lag below WINDOW // 2, inside windows of consecutive elements (FFT);
#   - at far lags (powers of two, row and plane strides, the half, third and quarter of the output)
#     the joint histogram of (x[i], x[i + lag]) against independence (chi-square), which also sees
#     relations that are not linear (frac(x + c));
#   - shared values: whether the values of two parts (the two halves, even and odd blocks, two calls)
#     coincide more often than values inside each part, a test that needs no model of the generator's
#     grid and catches parts that are permutations of each other;
#   - block sums: the sums of blocks of consecutive elements must vary as much as independent draws
#     make them vary, no more (blocks from different distributions, clumps) and no less (pairs u and
#     1 - u, stratified blocks, combs).
# For a dropout mask (0/1, only at positions whose kept value is clearly non-zero) the pair tests are
# Fisher's exact test (hypergeometric) on the number of positions dropped together, so a small p
# skews nothing; for a 0/1 sequence the Wald-Wolfowitz runs test is the lag-1 test.


@functools.lru_cache(maxsize=256)
def _normal_limit(tests: int) -> float:
    """Two-sided limit for the largest of `tests` standard normal scores, family-wise INDEPENDENCE_P."""
    return float(stats.norm.isf(INDEPENDENCE_P / (2 * tests)))


@functools.lru_cache(maxsize=1024)
def _chi2_limits(dof: float, tests: int, scale: float = 1.0) -> tuple[float, float]:
    """Lower and upper limits of scale * chi2(dof), two-sided, family-wise INDEPENDENCE_P over `tests`."""
    tail = INDEPENDENCE_P / (2 * tests)
    return scale * float(stats.chi2.ppf(tail, dof)), scale * float(stats.chi2.isf(tail, dof))


def _spread(count: int, n: int, device: torch.device) -> torch.Tensor:
    """`count` indices into range(n), all of them when count >= n, else spread by the hash stride."""
    if count >= n:
        return torch.arange(n, dtype=torch.int64, device=device)
    if n % _HASH_STRIDE:
        return (torch.arange(count, dtype=torch.int64, device=device) * _HASH_STRIDE) % n
    return torch.arange(count, dtype=torch.int64, device=device) * (n // count)


def _windows(n: int, device: torch.device) -> torch.Tensor:
    """Positions (windows, width) of windows of consecutive elements spread evenly over range(n)."""
    width = min(WINDOW, n)
    count = max(1, min(WINDOW_SAMPLE // width, n // width))
    starts = (torch.arange(count, dtype=torch.int64, device=device) * (n - width) // max(count - 1, 1))
    return starts[:, None] + torch.arange(width, dtype=torch.int64, device=device)


def _spectrum(a: torch.Tensor) -> torch.Tensor:
    """Real FFT of each row, zero-padded so that correlations below the row length do not wrap."""
    return torch.fft.rfft(a, n=1 << (2 * a.shape[-1] - 1).bit_length())


def _cross(fa: torch.Tensor, fb: torch.Tensor) -> torch.Tensor:
    """From two `_spectrum`s of rows of length w: the sum over rows and i of a[i] * b[i + k], at index
    k for lags 0 <= k < w and at index -k (from the end) for negative lags."""
    return torch.fft.irfft(fa.conj() * fb, n=2 * (fa.shape[-1] - 1)).sum(0)


def _correlate(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """`_cross` of two sets of rows."""
    return _cross(_spectrum(a), _spectrum(b))


def _window_lags(width: int, both_signs: bool) -> list[int]:
    top = width // 2
    return list(range(-top, top + 1)) if both_signs else list(range(1, top + 1))


def far_lags(n: int, shape: Sequence[int], start: int = 1) -> list[int]:
    """Distances at which blocks, rows, planes or parts of the output may be tied to each other:
    powers of two from `start`, the strides of every dimension, and the half, third and quarter of
    the output (rounded down and up)."""
    lags = set()
    k = 1
    while k < n:
        if k >= start:
            lags.add(k)
        k *= 2
    stride = 1
    for size in reversed(tuple(shape)[1:]):
        stride *= size
        lags.add(stride)
    for parts in (2, 3, 4):
        lags.update((n // parts, -(-n // parts)))
    return sorted(k for k in lags if 0 < k < n and k >= start)


def _pair_starts(n: int, lag: int, device: torch.device) -> torch.Tensor:
    """Up to PAIR_SAMPLE starts i of pairs (i, i + lag) that share no element: i in the even blocks
    of `lag` positions."""
    full = n // (2 * lag)
    count = full * lag + max(0, min(lag, n - 2 * lag * full - lag))
    j = _spread(PAIR_SAMPLE, count, device)
    return (j // lag) * (2 * lag) + j % lag


def _serial_correlation(x: torch.Tensor, what: str) -> list[str]:
    """Correlation of the flat float64 values at every lag below WINDOW // 2, in windows."""
    n = x.numel()
    if n < 2 * MIN_SAMPLES:
        return []
    v = x[_windows(n, x.device)]
    a = v - v.mean()
    r = _correlate(a, a)
    lags = _window_lags(v.shape[1], both_signs=False)
    pairs = torch.tensor([v.shape[0] * (v.shape[1] - k) for k in lags], dtype=torch.float64, device=x.device)
    z = r[1:len(lags) + 1] / (a.square().mean() * pairs.sqrt()).clamp_min(1e-300)
    worst = z.abs().argmax()
    score, index = host_scalars(z[worst], worst)
    limit = _normal_limit(len(lags))
    if abs(score) <= limit:
        return []
    lag = lags[int(index)]
    count = v.shape[0] * (v.shape[1] - lag)
    return [f"{what} {lag} elements apart are correlated (correlation {_fmt(score / math.sqrt(count))} over {count} "
            f"pairs, {_fmt(abs(score))} standard errors where independent draws stay within {_fmt(limit)}): "
            f"x[i + {lag}] depends on x[i] (values mirrored as 1 - u, shifted, or reused from a neighbouring "
            "block); draw every element from its own counter of a seeded generator (tl.rand(seed, offsets) with "
            "distinct offsets)"]


def _cells(x: torch.Tensor, low: float, high: float, bins: int) -> torch.Tensor:
    """Which of `bins` equal-width bins of [low, high) each value falls in."""
    return ((x - low) * (bins / (high - low))).floor().clamp(0, bins - 1).to(torch.int64)


def _joint_bins(pairs: int) -> int:
    return 16 if pairs >= 16 * 256 else 8 if pairs >= 8 * 64 else 4 if pairs >= 8 * 16 else 0


def serial_independence(x: torch.Tensor, low: float, high: float, lags: Sequence[int], what: str) -> list[str]:
    """Chi-square test of independence of (x[i], x[i + lag]) on a grid of equal-width bins, at each
    lag of `lags`, on up to PAIR_SAMPLE pairs sharing no element."""
    n = x.numel()
    tested, stats_ = [], []
    finest = _cells(x, low, high, 16)
    for lag in lags:
        starts = _pair_starts(n, lag, x.device)
        bins = _joint_bins(starts.numel())
        if not bins:
            continue
        cells = [finest[i] // (16 // bins) for i in (starts, starts + lag)]
        table = torch.bincount(cells[0] * bins + cells[1], minlength=bins * bins).reshape(bins, bins).to(torch.float64)
        rows, cols = table.sum(1), table.sum(0)
        expected = rows[:, None] * cols[None, :] / starts.numel()
        chi2 = torch.where(expected > 0, (table - expected).square() / expected.clamp_min(1e-300),
                           torch.zeros_like(expected)).sum()
        tested.append((lag, starts.numel()))
        stats_ += [chi2, (rows > 0).sum(), (cols > 0).sum()]
    if not tested:
        return []
    values = host_scalars(*stats_)
    failures = []
    for (lag, pairs), (chi2, r, c) in zip(tested, zip(values[0::3], values[1::3], values[2::3])):
        dof = int((r - 1) * (c - 1))
        if dof < 1:
            continue
        limit = _chi2_limits(dof, len(tested))[1]
        if chi2 > limit:
            failures.append(
                f"{what} {lag} elements apart are not independent: the joint histogram of (x[i], x[i+{lag}]) "
                f"over {pairs} pairs departs from independence (chi-square {_fmt(chi2)} on {dof} degrees of "
                f"freedom, allowed {_fmt(limit)}); part of the output is a function of another part (1 - x, "
                "x + c modulo 1, a copy, or the same counters in several programs): give every element its own "
                "counter of a generator seeded afresh on each call")
            if len(failures) >= 2:
                break
    return failures


def _splits(n: int, shape: Sequence[int]) -> list[tuple[str, int]]:
    """Ways to cut range(n) in two: ("the two halves", 0), then alternate blocks of B (B > 0)."""
    splits = [("the first and second halves of the output", 0)] if n >= 2 * MIN_SAMPLES else []
    sizes = set(BLOCKS)
    stride = 1
    for size in reversed(tuple(shape)[1:]):
        stride *= size
        sizes.add(stride)
    for size in sorted(sizes):
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


def _narrow_sides(parts: Sequence[torch.Tensor], splits: Sequence[tuple[str, int]]) -> list[tuple[torch.Tensor, ...]]:
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
    narrow = parts[0][0].element_size() <= 2
    top = high
    if narrow:
        sides = _narrow_sides([bits for bits, _ in parts], splits)
    else:
        total = parts[0][0].numel()
        fraction = min(1.0, SHARED_SAMPLE / max(sum(b.numel() for b, _ in parts), 1))
        top = low + fraction * (high - low)
        keys, positions = [], []
        for bits, values in parts:
            picked = (torch.nonzero(values < top).reshape(-1) if fraction < 1 else
                      torch.arange(values.numel(), device=values.device))
            keys.append(bits[picked])
            positions.append(picked)
        key = torch.cat(keys)
        if key.numel() < 2 * MIN_SAMPLES:
            return []
        _, inverse = torch.unique(key, return_inverse=True)
        size = int(inverse.max()) + 1
        sides = []
        for _, how in splits:
            side = torch.cat([_split_side(how, number, position, total) for number, position in enumerate(positions)])
            counts = torch.bincount(inverse + side * size, minlength=2 * size).to(torch.float64)
            sides.append((counts[:size], counts[size:]))
    scalars = []
    for a, b in sides:
        t = a + b
        m = t.sum()
        seen = t > 0
        q = a.sum() / m.clamp_min(1)
        qq = (q * (1 - q)).clamp_min(1e-300)
        tt = t.clamp_min(1)
        d = torch.where(seen, (a - tt * q).square() / (tt * qq), torch.zeros_like(t)).sum()
        mean = torch.where(seen, (m - t) / (m - 1).clamp_min(1), torch.zeros_like(t)).sum()
        var = torch.where(seen, 2 + (1 - 6 * qq) / (tt * qq), torch.zeros_like(t)).clamp_min(0).sum()
        scalars += [d, mean, var, ((a > 0) & (b > 0)).sum(), seen.sum(), m]
    values = host_scalars(*scalars)
    limit = _normal_limit(len(splits))
    failures = []
    for i, (name, _) in enumerate(splits):
        d, mean, var, both, distinct, m = values[6 * i:6 * i + 6]
        if m < 2 * MIN_SAMPLES:
            continue
        z = (mean - d) / math.sqrt(var + 1)
        if z > limit:
            sampled = "" if top >= high else f" (those below {_fmt(top)})"
            failures.append(
                f"{name} share their values: of {int(distinct)} distinct values{sampled}, {int(both)} occur "
                f"on both sides, spread between them {_fmt(z)} standard deviations more evenly than independent "
                f"draws allow (limit {_fmt(limit)}); one side is a permutation or copy of the other (the same seed "
                "and counters read again in another order): every element needs fresh random bits")
            if len(failures) >= 2:
                break
    return failures


def _block_sums(x: torch.Tensor, size: int) -> torch.Tensor:
    count = x.numel() // size
    return x[:count * size].reshape(count, size).sum(1)


def block_sums_check(x: torch.Tensor, shape: Sequence[int]) -> list[str]:
    """The sums of blocks of consecutive elements must spread as independent draws make them:
    sum (S_j - B m)^2 / (B s^2) ~ chi-square with (blocks - 1) degrees of freedom, two-sided."""
    n = x.numel()
    sizes = set(BLOCKS)
    if len(shape) > 1 and shape[-1] >= 16:
        sizes.add(int(shape[-1]))
    sizes = sorted(b for b in sizes if n // b >= 8)
    if not sizes:
        return []
    mean, var = x.mean(), x.var(unbiased=False)
    scalars = []
    for size in sizes:
        sums = _block_sums(x, size)
        scalars.append((sums - size * mean).square().sum() / (size * var).clamp_min(1e-300))
    values = host_scalars(*scalars)
    failures = []
    for size, t in zip(sizes, values):
        blocks = n // size
        lower, upper = _chi2_limits(blocks - 1, len(sizes))
        if t < lower or t > upper:
            how = ("too little: values are paired or stratified within blocks (u with 1 - u, one value per "
                   "sub-range) instead of independent" if t < lower else
                   "too much: blocks come from different distributions or reuse each other's numbers")
            failures.append(f"the sums of blocks of {size} consecutive elements vary {how} (chi-square "
                            f"{_fmt(t)} on {blocks - 1} degrees of freedom, allowed {_fmt(lower)} to {_fmt(upper)})")
            break
    return failures


def independence_checks(t: torch.Tensor, low: float, high: float, what: str = "values",
                        x: torch.Tensor | None = None) -> list[str]:
    """Every independence test of one output of values spread over [low, high) (`x`: its flat_values,
    when already at hand)."""
    x = flat_values(t) if x is None else x
    n = x.numel()
    if n < 2 * MIN_SAMPLES:
        return []
    failures = _serial_correlation(x, what)
    if not failures:
        failures += serial_independence(x, low, high, far_lags(n, t.shape), what)
    failures += shared_values([(_raw_bits(t), x)], low, high, _splits(n, t.shape))
    failures += block_sums_check(x, t.shape)
    return failures


def independent_runs(runs: Sequence[Any], low: float, high: float) -> list[str]:
    """Calls must be independent of each other, not only different: no correlation between calls at
    any shift below WINDOW // 2, no relation at equal positions (frac(u + c), 1 - u), and no values
    shared (one call a shift or permutation of another)."""
    failures = []
    leaves = [_tensor_leaves(run) for run in runs]
    for i in range(len(leaves)):
        for j in range(i + 1, len(leaves)):
            for a, b in zip(leaves[i], leaves[j]):
                if a.shape != b.shape or a.dtype != b.dtype or a.numel() < 2 * MIN_SAMPLES or not a.is_floating_point():
                    continue
                b = b.to(a.device)
                pair = f"calls {i + 1} and {j + 1}"
                x, y = flat_values(a), flat_values(b)
                found = _cross_correlation(x, y, pair)
                found += _paired_independence(x, y, low, high, pair)
                found += shared_values([(_raw_bits(a), x), (_raw_bits(b), y)], low, high, [(pair, -1)])
                del x, y
                failures += found[:2]
    return failures


def _cross_correlation(x: torch.Tensor, y: torch.Tensor, pair: str) -> list[str]:
    """Correlation between two calls at shifts -WINDOW // 2 .. WINDOW // 2, in windows."""
    index = _windows(x.numel(), x.device)
    a, b = x[index], y[index]
    a, b = a - a.mean(), b - b.mean()
    r = _correlate(a, b)
    lags = _window_lags(a.shape[1], both_signs=True)
    pick = torch.tensor([k % r.numel() for k in lags], dtype=torch.int64, device=x.device)
    counts = torch.tensor([a.shape[0] * (a.shape[1] - abs(k)) for k in lags], dtype=torch.float64, device=x.device)
    z = r[pick] / ((a.square().mean() * b.square().mean()).sqrt() * counts.sqrt()).clamp_min(1e-300)
    worst = z.abs().argmax()
    score, index_ = host_scalars(z[worst], worst)
    limit = _normal_limit(len(lags))
    if abs(score) <= limit:
        return []
    lag = lags[int(index_)]
    where = "at the same positions" if lag == 0 else f"with call 2 shifted by {lag} elements"
    return [f"{pair} are correlated {where} (correlation {_fmt(score / math.sqrt(a.shape[0] * (a.shape[1] - abs(lag))))}, "
            f"{_fmt(abs(score))} standard errors, limit {_fmt(limit)}): each call must draw from a fresh seed, not "
            "transform or shift the previous call's numbers"]


def _paired_independence(x: torch.Tensor, y: torch.Tensor, low: float, high: float, pair: str) -> list[str]:
    """Chi-square test of independence of (x[i], y[i]) over up to PAIR_SAMPLE positions."""
    index = _spread(PAIR_SAMPLE, x.numel(), x.device)
    bins = _joint_bins(index.numel())
    if not bins:
        return []
    cells = [_cells(v[index], low, high, bins) for v in (x, y)]
    table = torch.bincount(cells[0] * bins + cells[1], minlength=bins * bins).reshape(bins, bins).to(torch.float64)
    rows, cols = table.sum(1), table.sum(0)
    expected = rows[:, None] * cols[None, :] / index.numel()
    chi2, r, c = host_scalars(torch.where(expected > 0, (table - expected).square() / expected.clamp_min(1e-300),
                                          torch.zeros_like(expected)).sum(), (rows > 0).sum(), (cols > 0).sum())
    dof = int((r - 1) * (c - 1))
    if dof < 1:
        return []
    limit = _chi2_limits(dof, 1)[1]
    if chi2 <= limit:
        return []
    return [f"{pair} are not independent at equal positions: the joint histogram of (call 1, call 2) departs from "
            f"independence (chi-square {_fmt(chi2)} on {dof} degrees of freedom, allowed {_fmt(limit)}); one call's "
            "numbers are a function of the other's (u + c modulo 1, 1 - u): seed every call afresh"]


# Dropout masks ----------------------------------------------------------------------------------


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
    limit = INDEPENDENCE_P / (2 * tests)
    if tail[worst] >= limit:
        return None
    k = int(np.asarray(lags)[suspects[worst]])
    return describe(k, int(c[worst]), float(mean[suspects[worst]]), int(m[worst]), float(tail[worst]), limit,
                    bool(c[worst] > mean[suspects[worst]]))


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
    sums = host_scalars(w.sum(dtype=torch.float64), *(u.sum(dtype=torch.float64) for u in flats))
    live, dropped = sums[0], sums[1:]
    if live < 2 * MIN_SAMPLES or min(dropped) == 0 or max(dropped) == live:
        return []
    index = _windows(n, w.device)
    fw = _spectrum(w[index].to(torch.float64))
    counts = _cross(fw, fw)
    lags = _window_lags(index.shape[1], both_signs=False)
    far = far_lags(n, shape, start=index.shape[1] // 2 + 1)
    spectra = [_spectrum(u[index].to(torch.float64)) for u in flats]
    failures = []
    for number, (u, fu) in enumerate(zip(flats, spectra), start=1):
        near = torch.stack([_cross(fu, fu), _cross(fu, fw), _cross(fw, fu), counts], 1)[1:len(lags) + 1]
        rows = [near]
        for lag in far:
            starts = _spread(PAIR_SAMPLE, n - lag, w.device)
            a, b, wa, wb = u[starts], u[starts + lag], w[starts], w[starts + lag]
            rows.append(torch.stack([(a * b).sum(), (a * wb).sum(), (wa * b).sum(), (wa * wb).sum()]).double()[None])
        found = _mask_pair_failure(
            lags + far, torch.cat(rows), len(lags) + len(far),
            lambda k, c, e, m, tail, limit, more, number=number: (
                f"{what}, call {number}: the dropout mask is not independent across positions: elements {k} apart "
                f"are both dropped {c} times in {m} pairs where independent draws give {_fmt(e)} (Fisher's exact "
                f"test: tail probability {tail:.2g}, limit {limit:.2g}); "
                + ("the mask repeats itself at that distance (a periodic pattern, rows or blocks that reuse one "
                   "stream, or one random number shared by several elements)" if more else "the mask avoids "
                   "dropping both (a comb, an alternation, or a sequence that steps by a constant)")
                + ": draw one independent random number per element (tl.rand(seed, offsets), each element its "
                  "own offset, a fresh seed per call)"))
        if found:
            failures.append(found)
        failures += [f"{what}, call {number}: {f}" for f in _mask_block_check(u, w, shape)]
    shifts = _window_lags(index.shape[1], both_signs=True)
    pick = torch.tensor([k % counts.numel() for k in shifts], dtype=torch.int64, device=w.device)
    for i in range(len(flats)):
        for j in range(i + 1, len(flats)):
            sums = torch.stack([_cross(spectra[i], spectra[j]), _cross(spectra[i], fw), _cross(fw, spectra[j]),
                                counts], 1)[pick]
            found = _mask_pair_failure(
                shifts, sums, len(shifts),
                lambda k, c, e, m, tail, limit, more, i=i, j=j: (
                    f"{what}: the masks of calls {i + 1} and {j + 1} are related"
                    + (" at the same positions" if k == 0 else f" (call {j + 1}'s shifted by {k} elements)")
                    + f": {c} of {m} pairs dropped by both where independent draws give {_fmt(e)} (Fisher's exact "
                    f"test: tail probability {tail:.2g}, limit {limit:.2g}); draw a fresh seed on every call "
                    "instead of moving or transforming the previous call's mask"))
            if found:
                failures.append(found)
    return failures


def _mask_block_check(u: torch.Tensor, w: torch.Tensor, shape: Sequence[int]) -> list[str]:
    """Dropped counts per block of consecutive elements: D_j of I_j informative positions, against
    Binomial(I_j, p) for the common rate p (a scaled chi-square, both tails)."""
    n = u.numel()
    sizes = set(BLOCKS)
    if len(shape) > 1 and shape[-1] >= 16:
        sizes.add(int(shape[-1]))
    sizes = sorted(b for b in sizes if n // b >= 16)
    if not sizes:
        return []
    rate = u.sum(dtype=torch.float64) / w.sum(dtype=torch.float64)
    pq = (rate * (1 - rate)).clamp_min(1e-300)
    scalars = []
    for size in sizes:
        d, i = _block_sums(u, size).double(), _block_sums(w, size).double()
        live = i > 0
        ii = i.clamp_min(1)
        t = torch.where(live, (d - ii * rate).square() / (ii * pq), torch.zeros_like(d)).sum()
        mean = live.sum() - 1
        var = torch.where(live, 2 + (1 - 6 * pq) / (ii * pq), torch.zeros_like(d)).clamp_min(0).sum()
        scalars += [t, mean, var]
    values = host_scalars(*scalars)
    for k, size in enumerate(sizes):
        t, mean, var = values[3 * k:3 * k + 3]
        if mean < 15 or var <= 0:
            continue
        scale, dof = var / (2 * mean), 2 * mean * mean / var  # Satterthwaite: scale * chi2(dof) with that mean and variance
        lower, upper = _chi2_limits(round(dof, 3), len(sizes), round(scale, 6))
        if t < lower or t > upper:
            how = ("too regular (a periodic pattern, not independent draws)" if t < lower else
                   "too unevenly (elements dropped together in clumps or whole rows)")
            return [f"the number of dropped elements per block of {size} varies {how}: statistic {_fmt(t)}, "
                    f"allowed {_fmt(lower)} to {_fmt(upper)} for {int(mean) + 1} blocks"]
    return []


def uniform_checks(t: Any, low: float = 0.0, high: float = 1.0, dtype: torch.dtype | None = None,
                   shape: Sequence[int] | None = None) -> list[str]:
    """Everything a sample of U(low, high) in [low, high) must satisfy; failure sentences, or []."""
    if not isinstance(t, torch.Tensor):
        return [f"returned {type(t).__name__} where a tensor was expected"]
    if shape is not None and tuple(t.shape) != tuple(shape):
        return [f"output shape {tuple(t.shape)} where {tuple(shape)} was expected"]
    if dtype is not None and t.dtype != dtype:
        return [f"output dtype {str(t.dtype).removeprefix('torch.')} where "
                f"{str(dtype).removeprefix('torch.')} was expected"]
    if not t.is_floating_point():
        return [f"output dtype {str(t.dtype).removeprefix('torch.')} is not a floating type"]
    x = flat_values(t)
    n = x.numel()
    if n == 0:
        return []
    bad, below, at_or_above = map(int, host_scalars((~torch.isfinite(x)).sum(), (x < low).sum(), (x >= high).sum()))
    if bad:
        return [f"{bad} of {n} elements are NaN or Inf (unwritten output elements?)"]
    failures = []
    if below or at_or_above:
        failures.append(f"{below + at_or_above} of {n} values lie outside [{_fmt(low)}, {_fmt(high)}) "
                        f"(min {_fmt(float(x.min()))}, max {_fmt(float(x.max()))}; the upper bound is exclusive, "
                        "so values that round up to it in a narrow dtype must be kept below it)")
        return failures
    step = max(spacing_below(abs(low), t.dtype), spacing_below(abs(high), t.dtype))
    sample = subsample(x)
    distinct, collision = value_counts(sample)
    failures += ks_uniform(sample, low, high, slack=step / (high - low))
    failures += moment_checks(x, low, high, slack=step)
    failures += distinct_fraction_check(distinct, sample.numel(), t.dtype)
    failures += repetition_checks(t, collision)
    if not any("repeat" in f for f in failures):
        failures += repeated_windows_check(t, collision)
    if not failures:
        failures += independence_checks(t, low, high, x=x)
    return failures


def _tensor_leaves(tree: Any) -> list[torch.Tensor]:
    if isinstance(tree, torch.Tensor):
        return [tree]
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _tensor_leaves(item)]
    return []


def distinct_runs(runs: Sequence[Any]) -> list[str]:
    """Different calls must draw different numbers: no two runs may agree at more positions than chance.

    A kernel seeded with a constant (or from state that does not advance) returns the same tensor on
    every call; one that leaves part of its output unwritten agrees with another run on that part.
    """
    failures = []
    leaves = [_tensor_leaves(run) for run in runs]
    for i in range(len(leaves)):
        for j in range(i + 1, len(leaves)):
            for a, b in zip(leaves[i], leaves[j]):
                if a.shape != b.shape or a.numel() == 0:
                    continue
                n = a.numel()
                collision = collision_probability(subsample(flat_values(a)))
                if a.dtype == b.dtype:
                    equal = int(torch.count_nonzero(_raw_bits(a) == _raw_bits(b).to(a.device)))
                else:
                    equal = int(torch.count_nonzero(flat_values(a) == flat_values(b).to(a.device)))
                if equal > allowed_count(n, collision):
                    same = "returned identical values" if equal == n else f"agree at {equal} of {n} positions"
                    failures.append(f"calls {i + 1} and {j + 1} {same} (independent draws agree at about "
                                    f"{_fmt(collision * n)}): draw a fresh seed on every call and write every "
                                    "output element")
    return failures


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
    masks = []
    for number, run in enumerate(runs, start=1):
        got = run.to(device=expected.device, dtype=torch.float64)
        if got.shape != expected.shape:
            return [f"{what}: output shape {tuple(got.shape)} where {tuple(expected.shape)} was expected"]
        dropped = got == 0
        wrong = ~dropped & ((got - expected).abs() > eps * (expected.abs() + scale))
        if bool(wrong.any()):
            i = int(torch.nonzero(wrong.reshape(-1))[0])
            failures.append(f"{what}, call {number}: {int(wrong.sum())} kept elements are neither 0 nor the "
                            f"undropped value scaled by 1/(1-p) (first at flat index {i}: expected "
                            f"{float(expected.reshape(-1)[i]):.6g}, got {float(got.reshape(-1)[i]):.6g})")
        zeros, trials = int((dropped & informative).sum()), int(informative.sum())
        if p == 0 and zeros:
            failures.append(f"{what}, call {number}: {zeros} elements were dropped with p = 0")
        elif trials >= MIN_SAMPLES:
            failures.extend(f"{message} (call {number})" for message in
                            binomial_check(zeros, trials, p, f"{what}: zeroed elements"))
        masks.append(dropped & informative)
    if p > 0 and len(masks) > 1 and int(masks[0].sum()) >= MIN_SAMPLES and bool(torch.equal(masks[0], masks[1])):
        failures.append(f"{what}: two calls dropped exactly the same elements; draw a fresh seed on every call")
    if not failures and 0 < p < 1:
        failures += mask_independence(masks, informative, tuple(expected.shape), what)
    return failures
