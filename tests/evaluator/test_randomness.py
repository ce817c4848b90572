"""Statistical checks for random outputs: what passes, what fails."""

import pytest
import torch

from evaluator.contracts import Expected, Tolerance
from evaluator.randomness import (distinct_runs, dropout_checks, independence_checks, independent_runs, limits,
                                  mask_independence, uniform_checks)

VALUES = torch.randn(20000, generator=torch.Generator().manual_seed(0), dtype=torch.float64)


def dropped(seed: int, p: float = 0.3, scale: float = 1.0) -> torch.Tensor:
    keep = torch.rand(VALUES.shape, generator=torch.Generator().manual_seed(seed)) >= p
    return torch.where(keep, VALUES / (1 - p) * scale, torch.zeros_like(VALUES)).float()


def test_a_correct_dropout_passes():
    assert dropout_checks([dropped(1), dropped(2)], VALUES / 0.7, 0.3, 1e-5) == []


def test_dropout_failures_are_named():
    assert "kept elements are neither 0" in dropout_checks([dropped(1, scale=1.1), dropped(2)], VALUES / 0.7, 0.3, 1e-5)[0]
    keep_all = (VALUES / 0.7).float()
    assert any("zeroed elements" in f for f in dropout_checks([keep_all, keep_all], VALUES / 0.7, 0.3, 1e-5))
    assert any("same elements" in f for f in dropout_checks([dropped(1), dropped(1)], VALUES / 0.7, 0.3, 1e-5))
    assert dropout_checks([dropped(1, p=0.5), dropped(2, p=0.5)], VALUES / 0.5, 0.3, 1e-5)


def test_uniform_checks_and_fresh_draws():
    good = [torch.rand(100000, generator=torch.Generator().manual_seed(s)) for s in (1, 2)]
    assert uniform_checks(good[0]) == [] and distinct_runs(good) == []
    assert uniform_checks(torch.full((100000,), 0.5))
    assert uniform_checks(good[0] ** 2)
    assert distinct_runs([good[0], good[0].clone()])
    tiled = good[0][:4096].repeat(24)
    assert uniform_checks(tiled)


def test_complex_outputs_are_compared_by_real_and_imaginary_parts():
    x = torch.randn(256, dtype=torch.complex64, generator=torch.Generator().manual_seed(3))
    expected = Expected(x, x.to(torch.complex128))
    assert Tolerance().judge(expected, [x.clone(), x.clone()]).passed
    assert not Tolerance().judge(expected, [x.conj(), x.conj()]).passed


def uniform(n: int, seed: int) -> torch.Tensor:
    return torch.rand(n, generator=torch.Generator().manual_seed(seed))


def test_each_failure_of_a_uniform_output_is_named():
    good = uniform(1 << 18, 5)
    assert any("outside [0, 1)" in f for f in uniform_checks(good + 0.5))
    assert any("NaN or Inf" in f for f in uniform_checks(torch.where(good < 0.01, torch.nan, good)))
    assert any("Kolmogorov-Smirnov" in f for f in uniform_checks(good.sqrt()))
    assert any(f.startswith("mean") for f in uniform_checks(good * 0.98))
    rows = good[:1024 * 256].reshape(256, 1024)[::2]
    assert any("distance of 1024 elements" in f for f in uniform_checks(torch.stack([rows, rows], 1).reshape(-1)))
    assert any("runs of" in f for f in uniform_checks(torch.cat([good[:5000], good[7:7 + 5000], good[10000:]])))
    assert any("distinct values" in f for f in uniform_checks((good * 1000).floor() / 1000))


def test_uniform_checks_pass_on_a_gpu_shaped_workload_in_a_few_transfers():
    """A correct output passes however it is shaped (rows, planes), with the KS test's critical
    distance taken for the subsample's size."""
    for shape in ((512, 1000), (16, 3, 513), (40001,)):
        t = uniform(int(torch.tensor(shape).prod()), 11).reshape(shape)
        assert uniform_checks(t, shape=shape) == [], shape


def test_the_kolmogorov_smirnov_distance_is_scipys():
    from scipy import stats

    from evaluator.randomness import ks_uniform

    skewed = uniform(5000, 3) ** 1.3
    reported = ks_uniform(skewed, 0.0, 1.0)[0]
    expected = stats.kstest(skewed.double().numpy(), "uniform")
    assert f"distance {expected.statistic:.4g} over 5000 samples" in reported
    assert f"near {expected.statistic_location:.4g}" in reported


# Independence -----------------------------------------------------------------------------------
# Correct streams of every evaluated dtype pass, in the shapes the tasks use, and each structured
# stream (what a kernel that saves random numbers produces) fails, also where the older tests pass.

HALF = (torch.float16, torch.bfloat16)
LEVELS = {torch.float32: 1 << 24, torch.float16: 1 << 11, torch.bfloat16: 1 << 8}
SHAPES = ((64, 1000), (16, 3, 513), (40001,), (3, 1001), (4097,), (2, 1, 17, 5))


def levels(n: int, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    """Integer levels k of a uniform output k / LEVELS (a grid generator, as kernels write them)."""
    return torch.randint(0, LEVELS[dtype], (n,), generator=gen)


def on_grid(k: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return (k.double() / LEVELS[dtype]).to(dtype)


def rounded_like_triton(shape, dtype, gen) -> torch.Tensor:
    """tl.rand's float32 (a 31-bit integer times 2**-31, rounded to float32), floored to the half grid."""
    u = (torch.randint(0, 2**31, shape, generator=gen, dtype=torch.int64).double() * 4.6566127342e-10).float()
    u = torch.where(u >= 1, torch.full_like(u, 0.99999994), u)
    return u if dtype == torch.float32 else on_grid((u.double() * LEVELS[dtype]).floor(), dtype)


def test_correct_generators_pass_the_independence_checks():
    """2 seeds x 6 shapes x 3 dtypes x 2 generators (torch.rand and a tl.rand-like rounding), each
    output alone and the pair of calls: 72 outputs, none fails (about 1e-6 each is allowed). Many
    more seeds: benchmarks/randomness_false_failures.py."""
    failures = []
    for seed in range(2):
        gen = torch.Generator().manual_seed(1000 + seed)
        for shape in SHAPES:
            for dtype in (torch.float32, *HALF):
                for make in (lambda: torch.rand(shape, generator=gen, dtype=dtype),
                             lambda: rounded_like_triton(shape, dtype, gen)):
                    runs = [make(), make()]
                    found = uniform_checks(runs[0], dtype=dtype, shape=shape) + independent_runs(runs, 0.0, 1.0)
                    failures += [(seed, shape, dtype, f) for f in found]
    assert failures == []


def test_the_independence_tests_are_calibrated(monkeypatch):
    """At a family-wise level of 5% the families fail correct outputs about that often, not more:
    the statistics follow the distributions the limits assume (the 1e-7 tail itself is extrapolated)."""
    monkeypatch.setattr(limits, "INDEPENDENCE_P", 0.05)
    limits.normal_limit.cache_clear()
    limits.chi2_limits.cache_clear()
    try:
        outputs = failed = 0
        for seed in range(20):
            gen = torch.Generator().manual_seed(2000 + seed)
            for shape in ((64, 1000), (4097,)):
                for dtype in (torch.float32, torch.float16):
                    runs = [torch.rand(shape, generator=gen, dtype=dtype) for _ in range(2)]
                    outputs += 1
                    failed += bool(independence_checks(runs[0], 0.0, 1.0) + independent_runs(runs, 0.0, 1.0))
        # 7 families of tests at 5% each: at most about 35% of outputs (Bonferroni makes it less)
        assert failed <= 0.35 * outputs + 3, (failed, outputs)
        masks_failed = masks = 0
        for seed in range(20):
            gen = torch.Generator().manual_seed(3000 + seed)
            for shape, p in (((33, 257), 0.5), ((3, 48, 40), 0.1), ((1, 7, 1, 613), 0.8)):
                informative = torch.rand(shape, generator=gen) < 0.6
                drops = [torch.rand(shape, generator=gen) < p for _ in range(2)]
                masks += 1
                masks_failed += bool(mask_independence(drops, informative, shape, "dropout"))
        # 5 families (two calls' positions and blocks, and the pair of calls) at 5% each
        assert masks_failed <= 0.25 * masks + 3, (masks_failed, masks)
    finally:
        monkeypatch.undo()
        limits.normal_limit.cache_clear()
        limits.chi2_limits.cache_clear()


def antithetic_halves(n, dtype, gen):
    h = n - n // 2
    k = levels(h, dtype, gen)
    return on_grid(torch.cat([k, LEVELS[dtype] - 1 - k[: n - h]]), dtype)


def antithetic_blocks(n, dtype, gen, block=1024):
    k = levels(n, dtype, gen)
    i = torch.arange(n)
    second = (i % block) >= block // 2
    source = torch.where(second, i - block // 2, i)
    return on_grid(torch.where(second, LEVELS[dtype] - 1 - k[source], k[source]), dtype)


def permuted_half(n, dtype, gen):
    h = n - n // 2
    k = levels(h, dtype, gen)
    return on_grid(torch.cat([k, k[(torch.arange(n - h) * 40499 + 17) % h]]), dtype)


def shifted_blocks(n, dtype, gen, block=1024):
    """Every block the first one plus a constant per block, modulo 1."""
    k = levels(block, dtype, gen)
    i = torch.arange(n)
    return on_grid((k[i % block] + (i // block) * 10368889) % LEVELS[dtype], dtype)


def stratified_blocks(n, dtype, gen, block=64):
    """One value in each 1/64 of the range per block of 64 (too even: a stratified sample)."""
    k = levels(n, dtype, gen) % (LEVELS[dtype] // block)
    strata = torch.arange(n) % block * (LEVELS[dtype] // block)
    return on_grid(strata + k, dtype)


@pytest.mark.parametrize("stream", [antithetic_halves, antithetic_blocks, permuted_half, shifted_blocks,
                                    stratified_blocks])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_structured_streams_fail(stream, dtype):
    gen = torch.Generator().manual_seed(7)
    for n in (64000, 4097):
        assert uniform_checks(stream(n, dtype, gen), dtype=dtype), (stream.__name__, n)


def test_a_large_permuted_half_fails_where_the_distinct_values_test_cannot_see_it():
    gen = torch.Generator().manual_seed(8)
    t = permuted_half(1 << 22, torch.float32, gen)  # subsampled: copies rarely both in the sample
    found = uniform_checks(t, dtype=torch.float32)
    assert len(found) == 1 and "first and second halves of the output share their values" in found[0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_calls_that_transform_each_other_fail(dtype):
    gen = torch.Generator().manual_seed(9)
    n, top = 64000, LEVELS[dtype]
    base = levels(n + 16, dtype, gen)
    offset = [on_grid((base[:n] + int(0.618 * top)) % top, dtype), on_grid((base[:n] + int(0.211 * top)) % top, dtype)]
    shifted = [on_grid(base[1:n + 1], dtype), on_grid(base[4:n + 4], dtype)]
    permuted = [on_grid(base[(torch.arange(n) * a + 3) % n], dtype) for a in (65537, 92821)]
    mirrored = [on_grid(base[:n], dtype), on_grid(top - 1 - base[:n], dtype)]
    assert any("at the same positions" in f for f in independent_runs(offset, 0.0, 1.0))
    assert any("shifted by -3 elements" in f for f in independent_runs(shifted, 0.0, 1.0))
    assert any("share their values" in f for f in independent_runs(permuted, 0.0, 1.0))
    assert independent_runs(mirrored, 0.0, 1.0)
    for runs in (offset, shifted, permuted, mirrored):
        assert distinct_runs(runs) == []  # the older test (equal values at equal positions) sees none of these


DROPOUT_CASES = (((33, 257), 0.5, 0.5), ((3, 1001), 0.75, 0.25), ((1, 7, 1, 613), 0.8, 0.75), ((3, 48, 40), 0.1, 0.0),
                 ((2, 33, 72), 0.3, 0.0), ((192, 96), 0.2, 0.0))


def dropout_runs(shape, p, shrink, seed, dtype=torch.float32, mask=None):
    """Two calls of dropout then hardshrink(shrink) on the same input; `mask(shape, p, call, gen)`
    gives the dropped elements (independent draws when None)."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=gen, dtype=torch.float64)
    kept = x / (1 - p)
    kept = torch.where(kept.abs() > shrink, kept, torch.zeros_like(kept))
    runs = []
    for call in (1, 2):
        drop = torch.rand(shape, generator=gen) < p if mask is None else mask(shape, p, call, gen)
        runs.append(torch.where(drop, torch.zeros_like(kept), kept).to(dtype))
    return runs, kept


def test_correct_dropout_masks_pass():
    """10 seeds x 6 task shapes (p from 0.1 to 0.8, up to 75% of elements uninformative) x 2 dtypes."""
    failures = []
    for seed in range(10):
        for shape, p, shrink in DROPOUT_CASES:
            for dtype in (torch.float32, torch.float16):
                runs, kept = dropout_runs(shape, p, shrink, 100 + seed, dtype)
                failures += [(seed, shape, dtype, f) for f in dropout_checks(runs, kept, p, 1e-2)]
    assert failures == []


def flat_index(shape):
    return torch.arange(int(torch.tensor(shape).prod())).reshape(shape)


def comb(shape, p, call, gen):
    return ((flat_index(shape) * 7 + call) % 20).float() < 20 * p


def shared_pairs(shape, p, call, gen):
    n = flat_index(shape).numel()
    return (torch.rand((n + 1) // 2, generator=gen).repeat_interleave(2)[:n] < p).reshape(shape)


def weyl(shape, p, call, gen):
    start = int(torch.randint(0, 2**31 - 1, (1,), generator=gen))
    return ((flat_index(shape) * 2654435769 + start) % 2**32).double() / 2**32 < p


def alternating_rows(shape, p, call, gen):
    return ((flat_index(shape) // shape[-1] * 7 + call) % 20).float() < 20 * p


STREAM = torch.rand(1 << 20, generator=torch.Generator().manual_seed(10))


def moving_stream(shape, p, call, gen):
    n = flat_index(shape).numel()
    return (STREAM[3 * call:3 * call + n] < p).reshape(shape)


@pytest.mark.parametrize("mask,message", [
    (comb, "not independent across positions"), (shared_pairs, "elements 1 apart"),
    (weyl, "not independent across positions"), (alternating_rows, "not independent across positions"),
    (moving_stream, "masks of calls 1 and 2 are related (call 2's shifted by -3 elements)")])
def test_patterned_dropout_masks_fail(mask, message):
    for shape, p, shrink in DROPOUT_CASES:
        if mask is alternating_rows and shape[-1] * 12 > flat_index(shape).numel():
            continue  # too few rows to keep the zero fraction at p: the binomial test fails that already
        runs, kept = dropout_runs(shape, p, shrink, 11, mask=mask)
        found = dropout_checks(runs, kept, p, 1e-5)
        assert any(message in f for f in found), (mask.__name__, shape, found)


def test_every_call_is_compared_with_every_earlier_call():
    from evaluator.earlier_calls import EarlierCalls
    gen = torch.Generator().manual_seed(7)
    history = EarlierCalls()
    for shape in ((64, 1000), (16, 3, 513), (40001,), (4097,)):
        for dtype in (torch.float32, torch.float16):
            assert history.add([torch.rand(shape, generator=gen, dtype=dtype) for _ in range(2)]) is None
    seeded = [torch.Generator().manual_seed(s) for s in (11, 12)]
    alternating = EarlierCalls()
    first = [torch.rand((32, 1000), generator=g) for g in seeded]
    assert alternating.add(first) is None, "a case's two runs from two seeds differ"
    seeded = [torch.Generator().manual_seed(s) for s in (11, 12)]
    again = [torch.rand((5, 3001), generator=g) for g in seeded]
    reason = alternating.add(again)
    assert reason is not None and "earlier call" in reason
