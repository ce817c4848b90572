"""Statistical checks for the outputs of random ops, for `Statistical(check=...)` contracts.

Random outputs are never compared with torch's own random stream. Instead a case is judged by
distribution tests on each run (range, Kolmogorov-Smirnov, mean and variance), by tests that catch
a broken random stream (values repeating at fixed distances, which is what programs seeded
identically produce; runs of consecutive values reappearing anywhere; too few distinct values),
by independence tests within each run and between the runs (see independence.py: correlation
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

Modules: limits (thresholds and sample sizes), sampling (how an output is read), distribution,
repetition, windows (where the independence tests look), independence, shared_values,
between_calls, dropout, and uniform (all the checks of one uniform output).
"""

from evaluator.randomness.between_calls import distinct_runs, independent_runs
from evaluator.randomness.distribution import (binomial_check, distinct_fraction_check, ks_critical_distance,
                                               ks_uniform, moment_checks, spacing_below)
from evaluator.randomness.dropout import dropout_checks, mask_independence
from evaluator.randomness.independence import block_sums_check, independence_checks, serial_independence
from evaluator.randomness.limits import (COLLISION_FLOOR, KS_P_VALUE, LAGS, MIN_DISTINCT_FRACTION, MIN_SAMPLES, SIGMAS,
                                         SLACK_COUNT, SUBSAMPLE, allowed_count, fmt_number)
from evaluator.randomness.repetition import repeated_windows_check, repetition_checks
from evaluator.randomness.sampling import collision_probability, flat_values, subsample, value_counts
from evaluator.randomness.shared_values import shared_values
from evaluator.randomness.uniform import uniform_checks
from evaluator.randomness.windows import far_lags

__all__ = ["COLLISION_FLOOR", "KS_P_VALUE", "LAGS", "MIN_DISTINCT_FRACTION", "MIN_SAMPLES", "SIGMAS", "SLACK_COUNT",
           "SUBSAMPLE", "fmt_number", "allowed_count", "binomial_check", "block_sums_check",
           "collision_probability", "distinct_fraction_check", "distinct_runs", "dropout_checks", "far_lags",
           "flat_values", "independence_checks", "independent_runs", "ks_critical_distance", "ks_uniform",
           "mask_independence", "moment_checks", "repeated_windows_check", "repetition_checks",
           "serial_independence", "shared_values", "spacing_below", "subsample", "uniform_checks", "value_counts"]
