"""Statistical checks for the outputs of random ops, for `Statistical(check=...)` contracts.

Random outputs are never compared with torch's own random stream. Instead a case is judged by
distribution tests on each run (range, Kolmogorov-Smirnov, mean and variance), by tests that catch
a broken random stream (values repeating at fixed distances, which is what programs seeded
identically produce; runs of consecutive values reappearing anywhere; too few distinct values),
and by comparing the runs with each other (two calls must not return the same numbers). Every
function returns a list of failure sentences written for the author of the kernel; an empty list
means the check passed.

Thresholds are set so that a correct generator almost never fails: the KS test at p = 1e-6 (a
case runs a few KS tests and a suite many cases), moments within 6 standard errors, repetition
counts within 6 standard deviations (plus a small constant) of what independent draws give, where
the chance that two draws are equal is estimated from the output itself. Half-precision outputs
take only a grid of values; the tests allow for that discretization (one grid step near the top of
the range), so both truncating to the grid and rounding to nearest pass. Tests that need many
samples are skipped below MIN_SAMPLES elements; range, dtype, shape and finiteness are always
checked. Large tensors are tested on a fixed subsample of SUBSAMPLE elements spread over the whole
tensor (KS, collision estimate, windows); moments and fixed-distance repeats use every element.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Sequence

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
    return failures
