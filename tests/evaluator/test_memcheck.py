"""Compute Sanitizer's report, read into a reason a model can act on (memcheck.py).

The report under data/ is one compute-sanitizer 2025.3 wrote on an H200 for a Triton kernel whose
mask lets one lane past the end of a 1000-element tensor (line 7 of its file)."""

import time
from pathlib import Path

from evaluator import memcheck
from evaluator.loader import find_task
from evaluator.protocol import Job

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
    assert command[-3:] == ["-m", "evaluator.sandboxed.memcheck_process", str(tmp_path)]


# The run itself, on the CPU: the fork server's memcheck child is confined, then becomes the program
# named as the sanitizer. Stand-ins for Compute Sanitizer (which needs a GPU) take its arguments and
# exit status: one runs the runner and then reports the errors of the real report above, one fails
# to start. Everything else (confinement, exec, the runner, the protocol, the verdict) is the real path.
RUNS_THEN_REPORTS = """#!/bin/sh
while [ "${1#--}" != "$1" ]; do [ "$1" = --log-file ] && log=$2; shift 2; done
"$@" || exit $?
cp REPORT "$log"
exit 86
"""
RUNS_CLEAN = """#!/bin/sh
while [ "${1#--}" != "$1" ]; do shift 2; done
exec "$@"
"""
FAILS_TO_START = "#!/bin/sh\necho 'Device not supported' >&2\nexit 3\n"
HIDES_THE_GPUS = """#!/bin/sh
while [ "${1#--}" != "$1" ]; do shift 2; done
CUDA_VISIBLE_DEVICES= exec "$@"
"""
EXPLOITS = Path(__file__).parent / "exploits"


def _run(tmp_path, suite, sanitizer_text: str, source: str | None = None, drive=None, device: str = "cpu"):
    from evaluator import wire
    from evaluator.fork_server import ForkServer
    from evaluator.sandbox import Limits, Reach

    task = find_task("Activation/gelu", suite)
    folder = tmp_path / "shared"
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    (folder / "report.log").write_text(REPORT)
    sanitizer = folder / "sanitizer"
    sanitizer.write_text(sanitizer_text.replace("REPORT", str(folder / "report.log")))
    sanitizer.chmod(0o755)
    cases = []
    for index, case in enumerate(memcheck.checked_cases(task)):
        path = folder / f"case{index}.pt"
        wire.save(task.make_inputs(case.seed, case.size, case.mode, case.dtype), path)
        path.chmod(0o644)
        cases.append((index, path, f"{case.size} inputs"))
    job = Job(task=task.id, entry=task.entry, device=device)
    server = ForkServer(interpret=True)
    try:
        with memcheck.MemcheckRun(server, job, source or task.solution_path.read_text(), Limits(),
                                  Reach(readable=(folder,)), str(sanitizer)) as run:
            return drive(run, cases) if drive else run.check(cases)
    finally:
        server.close()


def test_the_sanitizers_error_status_is_a_memory_fail_with_its_reports_reason(tmp_path, suite):
    outcome = _run(tmp_path, suite, RUNS_THEN_REPORTS)
    assert outcome.verdict == "MEMORY_FAIL" and outcome.ran, outcome
    assert "kernel `k` read 4 bytes out of bounds" in outcome.reason and "5 invalid accesses" in outcome.reason
    assert outcome.report.startswith("Invalid __global__ read of size 4 bytes")


def test_a_sanitizer_that_cannot_start_checks_nothing_and_says_why(tmp_path, suite):
    outcome = _run(tmp_path, suite, FAILS_TO_START)
    assert outcome.verdict is None and not outcome.ran
    assert outcome.reason.startswith("compute-sanitizer did not start")


def test_a_clean_run_passes_every_case_and_a_crash_under_it_is_the_candidates(tmp_path, suite):
    clean = _run(tmp_path / "clean", suite, RUNS_CLEAN)
    assert clean.verdict is None and clean.ran and not clean.reason, clean
    crashing = "import os\ndef gelu(input, approximate='none'):\n    os._exit(9)\n"
    crashed = _run(tmp_path / "crashed", suite, RUNS_CLEAN, source=crashing)
    assert crashed.verdict == "RUNTIME_FAIL" and crashed.reason.startswith("under Compute Sanitizer:"), crashed


def test_a_device_that_cannot_be_set_up_before_the_candidate_runs_is_the_machines_error(tmp_path, suite):
    """The process under the sanitizer sets its device up before it imports the candidate; here no
    GPU is visible to it, so that fails with no candidate code run: raised, not a verdict."""
    import pytest

    from evaluator.sandbox import DeviceUnavailable

    with pytest.raises(DeviceUnavailable, match="memory check's process could not set up its device"):
        _run(tmp_path, suite, HIDES_THE_GPUS, device="cuda")


def test_a_device_failure_the_candidate_reports_itself_is_its_own_failure(tmp_path, suite):
    """Static checks aside, a candidate that writes a device failure into its channel while imported
    does so after the device was said ready: the candidate's RUNTIME_FAIL, not the machine's error."""
    forged = (EXPLOITS / "forged_device_failure.py").read_text()
    outcome = _run(tmp_path, suite, RUNS_CLEAN, source=forged)
    assert outcome.verdict == "RUNTIME_FAIL" and "CUDA error 304" in outcome.reason, outcome


def test_cases_go_to_the_run_as_they_are_built_and_the_end_adds_the_faulting_one(tmp_path, suite):
    built = [0]

    def drive(run, cases):
        run.feed(lambda: built[0], [(i, lambda p=p: p, text) for i, p, text in cases[:3]])
        time.sleep(3 * run.POLL_SECONDS)
        assert run.described == {}  # nothing built yet: nothing sent
        built[0] = 2
        run.end([cases[3]])  # cases 0 and 1, built by now, go; case 2, never built, does not; the faulting 3 does
        return run.outcome(), dict(run.described)

    outcome, sent = _run(tmp_path, suite, RUNS_CLEAN, drive=drive)
    assert outcome.verdict is None and outcome.ran, outcome
    assert sorted(sent) == [0, 1, 3]


def _writer_could_lock(lock_dir: Path) -> bool:
    """Could another candidate's timing (an exclusive hold) take the GPU lock right now?"""
    import fcntl
    import os

    fd = os.open(lock_dir / "gpu.lock", os.O_RDONLY | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def test_a_memcheck_case_holds_the_gpu_lock_except_while_its_kernels_compile(tmp_path):
    import torch

    from evaluator import gpu_lock, wire
    from evaluator.sandboxed import memcheck_process
    from evaluator.sandboxed.guards import LaunchRecorder
    from evaluator.task import Inputs

    lock_dir = tmp_path / "lock"
    gpu_lock.prepare(lock_dir)
    recorder = LaunchRecorder(lock_dir=str(lock_dir), lock_what="memcheck case")
    seen = []

    def candidate(x):  # one launch: its kernel compiled (and loaded) first, as the recorder's patch does
        seen.append(("before the launch", _writer_could_lock(lock_dir)))
        recorder.compile_unlocked(lambda: seen.append(("compiling", _writer_could_lock(lock_dir))))
        seen.append(("launching", _writer_could_lock(lock_dir)))
        return x

    inputs = tmp_path / "case.pt"
    wire.save(Inputs(args=(torch.ones(4),)), inputs)
    memcheck_process.run_case(candidate, str(inputs), torch.device("cpu"), recorder)
    assert seen == [("before the launch", False), ("compiling", True), ("launching", False)]
    assert _writer_could_lock(lock_dir) and not recorder.locking, "the case's end lets the lock go"


def test_a_failing_memcheck_case_still_lets_the_gpu_lock_go(tmp_path):
    import pytest
    import torch

    from evaluator import gpu_lock, wire
    from evaluator.sandboxed import memcheck_process
    from evaluator.sandboxed.guards import LaunchRecorder
    from evaluator.task import Inputs

    lock_dir = tmp_path / "lock"
    gpu_lock.prepare(lock_dir)
    recorder = LaunchRecorder(lock_dir=str(lock_dir))

    def candidate(x):
        raise RuntimeError("an illegal memory access was encountered")

    inputs = tmp_path / "case.pt"
    wire.save(Inputs(args=(torch.ones(4),)), inputs)
    with pytest.raises(RuntimeError):
        memcheck_process.run_case(candidate, str(inputs), torch.device("cpu"), recorder)
    assert _writer_could_lock(lock_dir)
