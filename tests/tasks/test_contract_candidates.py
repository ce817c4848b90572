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


KEEP_LINE = "v = tl.where(u >= p, x * scale, 0.0)"
BROKEN_DROPOUTS = {
    # keeps every element (scaled as if kept): the share of zeros is far from p
    "keeps everything": ("v = tl.where(u >= 0.0, x * scale, 0.0)", "zeroed elements"),
    # drops with probability p but forgets the 1/(1-p) scale
    "unscaled": ("v = tl.where(u >= p, x, 0.0)", "neither 0 nor the undropped value scaled"),
}


@pytest.mark.parametrize("broken", sorted(BROKEN_DROPOUTS))
def test_broken_dropouts_fail(broken, cpu_evaluator, suite):
    """One line of the reference solution changed: the statistical dropout contract notices."""
    task = find_task("Fusion/fused_hardshrink_dropout", suite)
    source = task.solution_path.read_text()
    assert KEEP_LINE in source
    line, reason = BROKEN_DROPOUTS[broken]
    result = cpu_evaluator.evaluate(task, source.replace(KEEP_LINE, line))
    assert result.verdict.value == "INCORRECT" and reason in result.reason, result.reason


R_LINE = "    r = tl.where(cols[None, :] >= rows[:, None], a, 0.0)\n"
Q_DONE = "        q_mask = (rows[:, None] < m) & (qcols[None, :] < kq)\n"
QR_VARIANTS = {
    # flipping Q's first column together with R's first row is another valid QR: accepted
    "signs flipped together": ({R_LINE: R_LINE + "    r = tl.where(rows[:, None] == 0, -r, r)\n",
                                Q_DONE: "        q = tl.where(qcols[None, :] == 0, -q, q)\n" + Q_DONE}, "CORRECT", ""),
    "Q scaled": ({Q_DONE: "        q = q * 1.001\n" + Q_DONE}, "INCORRECT", "Q^T Q"),
    "Q's sign flipped alone": ({Q_DONE: "        q = tl.where(qcols[None, :] == 0, -q, q)\n" + Q_DONE},
                               "INCORRECT", "A = QR"),
    "R not triangular": ({R_LINE: "    r = a + 1e-6\n"}, "INCORRECT", "triangular"),
}


@pytest.mark.parametrize("variant", sorted(QR_VARIANTS))
def test_qr_property_contract_accepts_other_signs_and_rejects_wrong_factors(variant, cpu_evaluator, suite):
    task = find_task("LinearAlgebra/qr", suite)
    source = task.solution_path.read_text()
    edits, verdict, reason = QR_VARIANTS[variant]
    for old, new in edits.items():
        assert old in source
        source = source.replace(old, new)
    result = cpu_evaluator.evaluate(task, source)
    assert result.verdict.value == verdict and reason in result.reason, result.reason
