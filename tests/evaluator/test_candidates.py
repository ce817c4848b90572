"""Every candidate under exploits/ and verdicts/ gets the verdict and reason its header states.

Header lines: `# task:`, `# expect:` (verdict), `# reason:` (a fragment of the reason),
optionally `# static: off` (prove the runtime guard alone), `# step-seconds:`,
`# memory-limit: watchdog`, `# disk-limit:` (MiB) and `# gpu: only` (what it attempts needs GPU
timing) or `# gpu: no` (what it attempts means something else on a GPU; the file says why). Every
other candidate runs on the CPU and, with `-m gpu`, on a GPU too. Drop a new file in either folder to
add a case.
"""

import re
from pathlib import Path

import pytest

from evaluator.loader import find_task

HERE = Path(__file__).parent
CANDIDATES = sorted((HERE / "exploits").glob("*.py")) + sorted((HERE / "verdicts").glob("*.py"))
HEADER = re.compile(r"^# ([a-z-]+): (.+)$")


def header(path: Path) -> dict[str, str]:
    fields = {}
    for line in path.read_text().splitlines():
        match = HEADER.match(line)
        if not match:
            break
        fields[match.group(1)] = match.group(2).strip()
    return fields


ON_GPU = [p for p in CANDIDATES if header(p).get("gpu") != "no"]
ON_CPU = [p for p in CANDIDATES if header(p).get("gpu") != "only"]


@pytest.mark.parametrize("path", ON_CPU, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_candidate_gets_its_verdict(path, evaluators, suite):
    _check(path, evaluators, suite, "cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("path", ON_GPU, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_candidate_gets_its_verdict_on_a_gpu(path, evaluators, suite):
    _check(path, evaluators, suite, "cuda")


def _check(path, evaluators, suite, device):
    spec = header(path)
    evaluator = evaluators(static=spec.get("static") != "off", device=device,
                           step_seconds=float(spec["step-seconds"]) if "step-seconds" in spec else None,
                           watchdog_bytes=1 << 30 if spec.get("memory-limit") == "watchdog" else None,
                           disk_bytes=int(spec["disk-limit"]) << 20 if "disk-limit" in spec else None)
    result = evaluator.evaluate(find_task(spec["task"], suite), path.read_text())
    assert result.verdict.value == spec["expect"], f"{result.verdict.value}: {result.reason}"
    assert spec["reason"] in result.reason, result.reason
    assert result.reason.strip(), "every verdict carries a reason"


def test_every_header_is_complete():
    for path in CANDIDATES:
        spec = header(path)
        assert {"task", "expect", "reason"} <= set(spec), path
        assert spec.get("gpu", "only") in ("only", "no"), path
