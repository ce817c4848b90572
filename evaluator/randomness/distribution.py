"""Checks of the values one at a time: distribution (Kolmogorov-Smirnov, moments, binomial counts), distinct values."""

from __future__ import annotations

import functools
import math

import torch
from scipy import stats

from evaluator.contracts import dtype_name, host_scalars
from evaluator.randomness.limits import KS_P_VALUE, MIN_DISTINCT_FRACTION, MIN_SAMPLES, SIGMAS, fmt_number


def spacing_below(value: float, dtype: torch.dtype) -> float:
    """Gap between `value` and the next representable `dtype` number below it (0 for non-floats)."""
    if not dtype.is_floating_point or value == 0:
        return 0.0
    eps = torch.finfo(dtype).eps
    exponent = math.ceil(math.log2(abs(value)))
    return eps * 2.0 ** (exponent - 1)


def binomial_check(successes: int, trials: int, p: float, what: str) -> list[str]:
    """`successes` out of `trials` must be within SIGMAS standard deviations of p * trials.

    For example the fraction of dropped elements of a dropout mask: binomial_check(zeros, n, p,
    "zeroed elements").
    """
    if trials == 0:
        return []
    sd = math.sqrt(max(p * (1 - p) * trials, 0.0))
    if abs(successes - p * trials) > SIGMAS * sd + 1:
        return [f"{what}: {successes} of {trials} ({fmt_number(successes / trials)}), expected a fraction of "
                f"{fmt_number(p)} (allowed {SIGMAS:g} standard deviations, {fmt_number(SIGMAS * sd / trials)})"]
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
    return [f"the values are not uniform on [{fmt_number(low)}, {fmt_number(high)}): Kolmogorov-Smirnov distance "
            f"{fmt_number(distance)} over {s} samples (allowed {fmt_number(allowed)}; the empirical CDF "
            f"deviates most near {fmt_number(location)})"]


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
        failures.append(f"mean {fmt_number(mean)} where U({fmt_number(low)}, {fmt_number(high)}) gives {fmt_number(expected_mean)} "
                        f"(allowed +-{fmt_number(mean_tol)} for {n} samples)")
    expected_var = width ** 2 / 12
    var_tol = SIGMAS * width ** 2 / math.sqrt(180 * n) + slack * width
    if abs(var - expected_var) > var_tol:
        failures.append(f"variance {fmt_number(var)} where U({fmt_number(low)}, {fmt_number(high)}) gives {fmt_number(expected_var)} "
                        f"(allowed +-{fmt_number(var_tol)} for {n} samples)")
    return failures


def distinct_fraction_check(distinct: int, s: int, dtype: torch.dtype) -> list[str]:
    """Float32/float64 outputs must take many distinct values (catches repeated blocks of any size):
    `distinct` of `s` sampled values."""
    if s < MIN_SAMPLES or not dtype.is_floating_point or torch.finfo(dtype).bits < 32:
        return []
    if distinct < MIN_DISTINCT_FRACTION * s:
        return [f"only {distinct} distinct values among {s} samples of a {dtype_name(dtype)} "
                "output: the random stream repeats or has too few random bits"]
    return []
