"""Candidates that probe the task contracts: each gets the verdict and reason its header states
(`# task:`, `# expect:`, `# reason:`), like tests/evaluator/exploits."""

from pathlib import Path

import pytest

from evaluator.loader import find_task
from tests.evaluator.test_candidates import header

CANDIDATES = sorted((Path(__file__).parent / "candidates").glob("*.py"))


@pytest.mark.parametrize("path", CANDIDATES, ids=lambda p: p.stem)
def test_contract_candidate(path, cpu_evaluator, suite):
    spec = header(path)
    result = cpu_evaluator.evaluate(find_task(spec["task"], suite), path.read_text())
    assert result.verdict.value == spec["expect"], f"{result.verdict.value}: {result.reason}"
    assert spec["reason"] in result.reason, result.reason
