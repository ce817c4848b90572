"""Thresholds and sample sizes of the random-output checks, the limits they set, and how numbers are written."""

from __future__ import annotations

import functools
import math

from scipy import stats  # with the task modules, not in the middle of a judgement holding the GPU lock

KS_P_VALUE = 1e-6
SIGMAS = 6.0
SLACK_COUNT = 5.0             # extra equal pairs tolerated on top of the binomial bound
MIN_SAMPLES = 32              # fewer elements: only range, dtype, shape and finiteness
SUBSAMPLE = 1 << 20           # the KS test and the collision estimate use at most this many values
COLLISION_FLOOR = 2.0 ** -20  # lower bound on the collision probability assumed for any stream
MIN_DISTINCT_FRACTION = 0.5   # float32/float64 outputs: distinct values in the subsample
LAGS = (1, 2, 3, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)
HASH_STRIDE = 2654435761      # a prime: index i of the subsample reads element (i * stride) mod n

# Independence tests (see evaluator/randomness/independence.py). Each family of tests of one output,
# or of one pair of calls, fails a correct generator with probability about INDEPENDENCE_P
# (Bonferroni within the family), so that all of them together stay near the KS test's 1e-6 per case.
INDEPENDENCE_P = 1e-7
WINDOW = 8192                 # correlations at every lag below WINDOW // 2, inside windows of this many elements
WINDOW_SAMPLE = 1 << 20       # at most this many elements in those windows
PAIR_SAMPLE = 1 << 16         # pairs (x[i], x[i + lag]) sampled per far lag
SHARED_SAMPLE = 1 << 20       # values in the value window the shared-values test sorts
BLOCKS = (64, 256, 1024, 4096, 16384, 65536)  # block lengths of the block-sum tests and the block splits


def fmt_number(x: float) -> str:
    return f"{x:.4g}"


def allowed_count(trials: int, p: float) -> float:
    """Most events (e.g. equal pairs) that `trials` independent tries of probability `p` plausibly give."""
    return p * trials + SIGMAS * math.sqrt(max(p * (1 - p) * trials, 0.0)) + SLACK_COUNT


def family_tail(tests: int) -> float:
    """Probability allowed in each tail of each of `tests` tests, for a family-wise INDEPENDENCE_P."""
    return INDEPENDENCE_P / (2 * tests)


@functools.lru_cache(maxsize=256)
def normal_limit(tests: int) -> float:
    """Two-sided limit for the largest of `tests` standard normal scores, family-wise INDEPENDENCE_P."""
    return float(stats.norm.isf(family_tail(tests)))


@functools.lru_cache(maxsize=1024)
def chi2_limits(dof: float, tests: int, scale: float = 1.0) -> tuple[float, float]:
    """Lower and upper limits of scale * chi2(dof), two-sided, family-wise INDEPENDENCE_P over `tests`."""
    tail = family_tail(tests)
    return scale * float(stats.chi2.ppf(tail, dof)), scale * float(stats.chi2.isf(tail, dof))
