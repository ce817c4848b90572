"""Statistical checks for random outputs: what passes, what fails."""

import torch

from evaluator.contracts import Expected, Tolerance
from evaluator.randomness import distinct_runs, dropout_checks, uniform_checks

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
