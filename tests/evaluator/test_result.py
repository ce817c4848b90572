"""EvalResult: its JSON round trip, schema versions, and the verdicts' rank."""

import math

import pytest

from evaluator.result import (SCHEMA_VERSION, BadElement, CaseResult, Environment, EvalResult, KernelInfo,
                              Maintainability, Performance, Stage, TimingStats, Verdict)


def full_result() -> EvalResult:
    return EvalResult(
        task_id="Math/softmax", verdict=Verdict.CORRECT, stage=Stage.DONE, reason="ok", source_hash="ab" * 32,
        environment=Environment(device="cuda:0", interpreter=False, torch="2.11", triton="3.6", python="3.12",
                                gpu="NVIDIA H100", driver="580"),
        cases=[CaseResult(size="small", dtype="float16", mode="outlier", seed=1, passed=False, reason="bad",
                          max_abs_err=1.5, max_rel_err=0.1, mismatches=2, numel=100,
                          first_bad=[BadElement([1, 2], 1.0, math.inf)], metrics={"cosine": 0.9})],
        performance=Performance(size="standard", dtype="float32", candidate=TimingStats(1.0, 0.9, 1.1, 0.01, 50),
                                eager=TimingStats(2.0, 1.9, 2.1, 0.02, 40), speedup=2.0, gbps=1000.0, mfu=None),
        kernels=[KernelInfo("softmax_kernel", 32, 0, 1024, 4, 3)], profile={"dram_throughput_pct": 81.0},
        maintainability=Maintainability(61.2, 4, 2.5), traceback="line 3", phases={"total": 1.0})


def test_eval_result_round_trips_through_json():
    result = full_result()
    again = EvalResult.from_json(result.to_json())
    assert again == result
    assert again.cases[0].first_bad[0].got == math.inf
    assert isinstance(again.verdict, Verdict) and isinstance(again.performance.candidate, TimingStats)


def test_newer_schema_is_refused_with_a_clear_error():
    data = full_result().to_dict()
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(ValueError, match="newer than this agentloop"):
        EvalResult.from_dict(data)
    with pytest.raises(ValueError, match="schema_version is missing"):
        EvalResult.from_dict({"task_id": "x"})


def test_verdicts_rank_from_no_code_to_correct_and_know_which_are_errors():
    order = [Verdict.NO_CODE, Verdict.STATIC_REJECT, Verdict.COMPILE_FAIL, Verdict.RUNTIME_FAIL,
             Verdict.CONTRACT_FAIL, Verdict.INCORRECT, Verdict.OUTLIER_FAIL, Verdict.MEMORY_FAIL, Verdict.CORRECT]
    assert [v.rank for v in order] == sorted(v.rank for v in order) and len({v.rank for v in order}) == len(order)
    assert Verdict.TIMEOUT.rank == Verdict.RUNTIME_FAIL.rank
    assert {v for v in Verdict if v.is_error} == {Verdict.NO_CODE, Verdict.STATIC_REJECT, Verdict.COMPILE_FAIL,
                                                   Verdict.RUNTIME_FAIL, Verdict.TIMEOUT, Verdict.CONTRACT_FAIL}
    assert Verdict.rank_of("MEMORY_FAIL") == Verdict.MEMORY_FAIL.rank and Verdict.rank_of(None) == 0


def test_a_version_1_result_reads_with_no_memory_check():
    data = full_result().to_dict()
    data["schema_version"] = 1
    del data["memory_check"]
    assert EvalResult.from_dict(data).memory_check is None
