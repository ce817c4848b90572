"""Compute Sanitizer's report, read into a reason a model can act on (memcheck.py).

The report under data/ is one compute-sanitizer 2025.3 wrote on an H200 for a Triton kernel whose
mask lets one lane past the end of a 1000-element tensor (line 7 of its file)."""

from pathlib import Path

from evaluator import memcheck
from evaluator.loader import find_task

REPORT = (Path(__file__).parent / "data" / "memcheck_report.log").read_text()
SOURCE = "\n".join(["import torch", "import triton", "import triton.language as tl", "", "@triton.jit",
                    "def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):",
                    "    x = tl.load(x_ptr + offs, mask=mask)"])


def test_the_first_error_is_read_from_a_real_report():
    finding = memcheck.parse(REPORT)
    assert (finding.access, finding.size, finding.space, finding.kernel, finding.line) == ("read", 4, "__global__", "k", 7)
    assert "1 bytes after the nearest allocation" in finding.where and finding.errors == 5


def test_the_reason_names_kernel_access_line_and_where_without_addresses():
    reason = memcheck.reason(memcheck.parse(REPORT), SOURCE, "small float32 inputs (seed 0)")
    assert reason.startswith("on small float32 inputs (seed 0), kernel `k` read 4 bytes out of bounds of global memory")
    assert "at line 7 (`x = tl.load(x_ptr + offs, mask=mask)`)" in reason
    assert "1 bytes after the nearest allocation of size 4,000 bytes" in reason and "0x" not in reason
    assert "5 invalid accesses in all" in reason


def test_the_excerpt_keeps_the_errors_and_drops_the_banner_and_addresses():
    excerpt = memcheck.excerpt(REPORT)
    assert excerpt.startswith("Invalid __global__ read of size 4 bytes")
    assert "COMPUTE-SANITIZER" not in excerpt and "0x7f" not in excerpt and "k+0xf0 in oob.py:7" in excerpt


def test_a_clean_report_has_no_finding_and_a_garbled_one_still_fails():
    assert memcheck.parse("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n") is None
    assert memcheck.parse("") is None
    garbled = memcheck.parse("========= ERROR SUMMARY: 3 errors\n")
    assert garbled is not None and garbled.errors == 3
    assert "out of bounds" in memcheck.reason(garbled, SOURCE, "edge inputs")
    assert "unreadable" in memcheck.reason(None, SOURCE, "edge inputs")


def test_memcheck_runs_small_and_edge_inputs_of_every_dtype(suite):
    task = find_task("Activation/gelu_fp16", suite)
    cases = memcheck.checked_cases(task)
    assert {(c.size, c.dtype) for c in cases} == {(s, d) for s in ("small", "edge") for d in task.dtypes}
    assert all(c.mode == "standard" for c in cases)


def test_the_sanitizer_is_started_with_an_error_status_and_its_own_report(tmp_path):
    command = memcheck.command("/usr/local/cuda/bin/compute-sanitizer", str(tmp_path))
    assert command[:3] == ["/usr/local/cuda/bin/compute-sanitizer", "--tool", "memcheck"]
    assert command[command.index("--error-exitcode") + 1] == str(memcheck.ERROR_EXIT)
    assert command[command.index("--log-file") + 1] == str(tmp_path / memcheck.REPORT)
    assert command[-3:] == ["-m", "evaluator.memcheck_run", str(tmp_path)]
