"""When the memory check's process starts (EvaluatorConfig.memcheck_start): beside the candidate's
("spawn"), or once one of its cases has passed ("first_pass"), so that a candidate failing on its
first case costs no second process. On the CPU, with a stand-in for Compute Sanitizer named in the
settings; everything else is the evaluator's real path."""

import importlib.util
from pathlib import Path

import pytest

from evaluator.evaluate import Evaluator, EvaluatorConfig
from evaluator.loader import find_task
from tests.evaluator.test_memcheck import REPORT

# runs the memory check's process as Compute Sanitizer would, then, for a candidate marked to be
# caught, reports the errors of test_memcheck.py's real report with Compute Sanitizer's error status
SANITIZER = """#!/bin/sh
while [ "${1#--}" != "$1" ]; do [ "$1" = --log-file ] && log=$2; shift 2; done
for scratch; do :; done
"$@" || exit $?
grep -q "caught by memcheck" "$scratch/candidate.py" || exit 0
cp REPORT "$log"
exit 86
"""
CAUGHT = "\n# caught by memcheck\n"

SCALING = Path(__file__).resolve().parents[2] / "benchmarks" / "executor_scaling.py"


def failing_copy(source: str, entry: str) -> str:
    spec = importlib.util.spec_from_file_location("executor_scaling", SCALING)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.failing_copy(source, entry, 1)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Evaluators by start, with the sanitizer stand-in in a folder of its own."""
    evaluators: dict[str, Evaluator] = {}
    folder = tmp_path_factory.mktemp("sanitizer")
    folder.chmod(0o755)
    (folder / "report.log").write_text(REPORT)
    (folder / "report.log").chmod(0o644)
    sanitizer = folder / "compute-sanitizer"
    sanitizer.write_text(SANITIZER.replace("REPORT", str(folder / "report.log")))
    sanitizer.chmod(0o755)

    def get(start: str) -> Evaluator:
        if start not in evaluators:
            evaluators[start] = Evaluator(EvaluatorConfig(device="cpu", cache_dir=tmp_path_factory.mktemp("cache"),
                                                          memcheck_start=start, sanitizer=str(sanitizer)))
        return evaluators[start]

    yield get
    for evaluator in evaluators.values():
        evaluator.close()


@pytest.fixture
def task(suite):
    return find_task("Math/abs", suite)


@pytest.mark.parametrize("start", ["spawn", "first_pass"])
def test_a_correct_candidate_is_memory_checked_whenever_the_check_starts(made, task, start):
    clean = made(start).evaluate(task, task.solution_path.read_text())
    assert clean.correct and clean.memory_check == "memcheck" and "cpu_memcheck" in clean.phases, clean.reason
    reported = made(start).evaluate(task, task.solution_path.read_text() + CAUGHT)
    assert reported.verdict.value == "MEMORY_FAIL" and "out of bounds" in reported.reason, reported.reason


def test_a_candidate_failing_its_first_case_starts_no_memory_check_at_first_pass_and_one_at_spawn(made, task):
    failing = failing_copy(task.solution_path.read_text(), task.entry)
    at_spawn = made("spawn").evaluate(task, failing)
    at_first_pass = made("first_pass").evaluate(task, failing)
    for result in (at_spawn, at_first_pass):
        assert result.verdict.value == "RUNTIME_FAIL" and "wrong after its kernels ran" in result.reason, result.reason
    assert "cpu_memcheck" in at_spawn.phases, "the process started beside the candidate's"
    assert "cpu_memcheck" not in at_first_pass.phases, "no case passed: no memory check's process"


def test_an_unknown_start_is_refused_before_anything_starts(tmp_path):
    with pytest.raises(ValueError, match="memcheck_start"):
        Evaluator(EvaluatorConfig(device="cpu", cache_dir=tmp_path, memcheck_start="later"))


def test_at_first_pass_the_check_starts_once_a_case_has_passed_even_if_a_later_one_fails(made, task):
    # each case runs twice: the third call is the second case's
    later = (task.solution_path.read_text() + f"\n\n_calls = [0]\n_solution = {task.entry}\n\n\n"
             f"def {task.entry}(*args, **kwargs):\n    _calls[0] += 1\n    if _calls[0] > 2:\n"
             "        raise ValueError('wrong from the second case on')\n    return _solution(*args, **kwargs)\n")
    result = made("first_pass").evaluate(task, later)
    assert result.verdict.value == "RUNTIME_FAIL" and "from the second case on" in result.reason, result.reason
    assert sum(c.passed for c in result.cases) >= 1 and "cpu_memcheck" in result.phases
