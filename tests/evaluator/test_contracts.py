"""Contracts judge what they should: the reference's own error passes, coarser arithmetic fails."""

import math

import pytest
import torch

from evaluator.contracts import (Approximate, Exact, Expected, Statistical, Tolerance, identical, same_bits,
                                 structure_problem)


def expected_for(fn, x: torch.Tensor) -> Expected:
    return Expected(lo=fn(x), hi=fn(x.double()))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_computing_in_higher_precision_and_rounding_once_passes(dtype):
    x = torch.randn(4096, generator=torch.Generator().manual_seed(0)).to(dtype)
    expected = expected_for(torch.exp, x)
    candidate = torch.exp(x.double()).to(dtype)
    assert Tolerance().judge(expected, [candidate, candidate.clone()]).passed


@pytest.mark.parametrize("dtype, coarser", [(torch.float32, torch.float16), (torch.float16, torch.bfloat16)])
def test_computing_in_a_coarser_type_fails(dtype, coarser):
    x = torch.randn(4096, generator=torch.Generator().manual_seed(0)).to(dtype)
    expected = expected_for(torch.exp, x)
    candidate = torch.exp(x.to(coarser)).to(dtype)
    judgement = Tolerance().judge(expected, [candidate, candidate])
    assert not judgement.passed and "outside tolerance" in judgement.reason
    assert judgement.first_bad and judgement.mismatches > 0


def test_tolerance_follows_the_references_own_error_for_long_reductions():
    gen = torch.Generator().manual_seed(1)
    a, b = torch.randn(64, 4096, generator=gen), torch.randn(4096, 64, generator=gen)
    expected = Expected(lo=a @ b, hi=a.double() @ b.double())
    reordered = (a.reshape(64, 64, 64).permute(1, 0, 2) @ b.reshape(64, 64, 64)).sum(0)  # another order
    assert Tolerance().judge(expected, [reordered, reordered]).passed
    tf32_like = (a.to(torch.bfloat16).float() @ b.to(torch.bfloat16).float())
    assert not Tolerance().judge(expected, [tf32_like, tf32_like]).passed
    assert not Tolerance(tf32=True).judge(expected, [tf32_like, tf32_like]).passed
    tf32 = (_round_mantissa(a, 10) @ _round_mantissa(b, 10))
    assert Tolerance(tf32=True).judge(expected, [tf32, tf32]).passed
    assert not Tolerance().judge(expected, [tf32, tf32]).passed


def _round_mantissa(x: torch.Tensor, bits: int) -> torch.Tensor:
    m, e = torch.frexp(x)
    return torch.ldexp(torch.round(m * 2 ** (bits + 1)) / 2 ** (bits + 1), e)


def test_nan_and_inf_positions_must_match():
    x = torch.tensor([1.0, math.inf, -math.inf, math.nan, 2.0])
    expected = Expected(lo=x.clone(), hi=x.double())
    assert Tolerance().judge(expected, [x.clone(), x.clone()]).passed
    swapped = torch.tensor([1.0, math.nan, -math.inf, math.nan, 2.0])
    judgement = Tolerance().judge(expected, [swapped, swapped])
    assert not judgement.passed and "NaN/Inf" in judgement.reason


def test_unwritten_output_fails_through_poison_disagreement():
    x = torch.randn(100)
    expected = Expected(lo=x.clone(), hi=x.double())
    run1, run2 = x.clone(), x.clone()
    run1[50:], run2[50:] = math.nan, -31337.0
    assert not Tolerance().judge(expected, [run1, run2]).passed


def test_constant_output_is_named():
    x = torch.randn(1000, generator=torch.Generator().manual_seed(3)) * 1e-6
    expected = Expected(lo=x.clone(), hi=x.double())
    zeros = torch.zeros_like(x)
    judgement = Tolerance(eps={"float32": 10.0}).judge(expected, [zeros, zeros])
    assert not judgement.passed and "every output element is 0" in judgement.reason


def test_structure_problems_are_described():
    lo = torch.zeros(3, 4)
    assert "shape (4, 3)" in structure_problem(lo, torch.zeros(4, 3))
    assert "dtype float16" in structure_problem(lo, torch.zeros(3, 4, dtype=torch.float16))
    assert "tuple of 1" in structure_problem((lo, lo), (lo,))
    assert structure_problem((lo, 3), (lo.clone(), 3)) is None


def test_exact_contract_allows_no_difference():
    idx = torch.arange(10)
    expected = Expected(lo=idx)
    assert Exact().judge(expected, [idx.clone(), idx.clone()]).passed
    off = idx.clone()
    off[3] += 1
    judgement = Exact().judge(expected, [idx.clone(), off])
    assert not judgement.passed and judgement.mismatches == 1 and judgement.first_bad[0].index == [3]


def test_approximate_metrics_and_gate():
    gen = torch.Generator().manual_seed(0)
    ref = torch.randn(256, 256, generator=gen, dtype=torch.float64)
    noisy = ref + 0.01 * torch.randn(256, 256, generator=gen, dtype=torch.float64)
    garbage = torch.randn(256, 256, generator=gen, dtype=torch.float64)
    contract = Approximate()
    assert contract.judge(Expected(lo=ref.float(), hi=ref), [noisy.float()]).passed
    failed = contract.judge(Expected(lo=ref.float(), hi=ref), [garbage.float()])
    assert not failed.passed and "cosine similarity" in failed.reason
    gated = Approximate(gate=lambda inputs, got: (False, "no quantization seen", {"q": 1.0}))
    judgement = gated.judge(Expected(lo=ref.float(), hi=ref), [noisy.float()])
    assert not judgement.passed and judgement.contract_violation and judgement.reason == "no quantization seen"


def test_statistical_contract_uses_its_check():
    contract = Statistical(check=lambda inputs, runs: [] if not torch.equal(runs[0], runs[1]) else ["same twice"])
    a = torch.rand(100)
    assert contract.judge(Expected(lo=a), [a, torch.rand(100)]).passed
    assert contract.judge(Expected(lo=a), [a, a.clone()]).reason == "same twice"


def test_high_precision_reference_really_is_float64(suite):
    from evaluator.references import expected_outputs
    task = suite["Activation/gelu"]
    inputs = task.make_inputs(0, "small", "standard", torch.float16)
    expected = expected_outputs(task, inputs, torch.device("cpu"))
    assert expected.lo.dtype == torch.float16 and expected.hi.dtype == torch.float64


def test_identical_compares_bits_and_structure():
    x = torch.tensor([1.0, math.nan, -0.0, math.inf])
    assert identical((x, [x.clone(), 3]), (x.clone(), [x.clone(), 3])), "NaN is bit-identical to itself"
    assert not identical(x, torch.tensor([1.0, math.nan, 0.0, math.inf])), "-0.0 and 0.0 differ in their bits"
    assert not identical(x, x.double()) and not identical(x, x[:3]) and not identical((x,), [x])
    assert not identical((x, 3), (x, 3.0)) and not identical(x, x.numpy())
    z = torch.tensor([1 + 2j, math.nan + 0j], dtype=torch.complex128)
    assert identical(z, z.clone()) and not identical(z, z.conj())
    assert same_bits(torch.tensor([True, False]), torch.tensor([True, False]))


@pytest.mark.parametrize("contract, make", [
    (Tolerance(), lambda x: torch.exp(x.double()).float()),
    (Tolerance(), lambda x: torch.exp(x.half()).float()),  # failing: judged alike too
    (Exact(), lambda x: (x > 0).to(torch.int32)),
    (Approximate(), lambda x: torch.exp(x.double()).float() * 1.01),
])
def test_judging_a_run_once_equals_judging_it_twice(contract, make):
    """What lets the evaluator judge once a second run that is bit for bit the first."""
    x = torch.randn(4096, generator=torch.Generator().manual_seed(4))
    exact = isinstance(contract, Exact)
    expected = Expected(lo=(x > 0).to(torch.int32), hi=None) if exact else expected_for(torch.exp, x)
    run = make(x)
    assert contract.judges_runs_apart
    assert contract.judge(expected, [run, run.clone()]) == contract.judge(expected, [run])
    assert not Statistical(check=lambda inputs, runs: []).judges_runs_apart, "identical draws must be seen"
