"""Compute Sanitizer's memcheck over a correct candidate, on a GPU: the evaluator's side.

A candidate whose outputs are right may still read or write outside its tensors (a mask that lets
one lane too many through, a loop bound without the block's offset): the numbers hide it when the
stray reads land in memory PyTorch's caching allocator holds and a `tl.where` drops them. So the
candidate runs once more, on its small and edge inputs of every dtype, in a fresh confined process
that the fork server turns into Compute Sanitizer's memcheck running `evaluator.sandboxed.memcheck_process`,
with PyTorch's caching allocator off, so that every tensor is an allocation of its exact size and one
byte past its end is an invalid address. Compute Sanitizer instruments the kernels from outside the
candidate's Python code and signals what it found by its exit status; its report, which names the
kernel, the access, the source line and where the address fell, becomes the reason.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import queue
import re
import shutil
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from evaluator import protocol
from evaluator.cases import Case
from evaluator.fork_server import ExitInfo, ForkServer
from evaluator.sandbox import ChildGone, DeviceReadiness, DeviceUnavailable, Limits, Reach, Sandbox, read_tail
from evaluator.task import Task

ERROR_EXIT = 86  # compute-sanitizer's exit status when it found an error
REPORT = "memcheck.log"
REPORT_BYTES = 64 << 10
PRINT_LIMIT = 16  # errors the report spells out; the summary still counts them all
EXIT_WAIT_SECONDS = 60  # for compute-sanitizer to finish its report once the candidate's calls are done
SEARCHED = ("/usr/local/cuda/bin/compute-sanitizer", "/usr/local/cuda-*/bin/compute-sanitizer",
            "/opt/nvidia/compute-sanitizer/compute-sanitizer", "/usr/local/cuda/compute-sanitizer/compute-sanitizer")


def sanitizer_path() -> str | None:
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    return next((p for pattern in SEARCHED for p in sorted(glob.glob(pattern)) if os.access(p, os.X_OK)), None)


def checked_cases(task: Task) -> list[Case]:
    """Small and edge inputs, ordinary values, one seed, every dtype."""
    seed = task.seeds[0]
    return [Case(size, dtype, "standard", seed) for dtype in task.dtypes for size in ("small", "edge")]


def command(sanitizer: str, scratch: str) -> list[str]:
    return [sanitizer, "--tool", "memcheck", "--error-exitcode", str(ERROR_EXIT), "--print-limit", str(PRINT_LIMIT),
            "--show-backtrace", "no", "--log-file", os.path.join(scratch, REPORT),
            sys.executable, "-m", "evaluator.sandboxed.memcheck_process", scratch]


def exec_sanitizer(scratch: str, sanitizer: str) -> None:
    """In the fork server's confined child: becomes compute-sanitizer running the candidate."""
    env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1")
    os.execve(sanitizer, command(sanitizer, scratch), env)


@dataclass
class Finding:
    """The first invalid access of a report, and how many there were."""

    access: str           # "read", "write", ...
    size: int | None      # bytes
    space: str            # "__global__", "__shared__", ...
    kernel: str
    line: int | None
    where: str            # how the address relates to the nearest allocation, as reported
    errors: int | None


ACCESS = re.compile(r"Invalid (__\w+__) (\w+) of size (\d+) bytes?")
AT = re.compile(r"^=*\s*at (?:0x[0-9a-f]+ in )?([^\s+(]+)(?:\([^)]*\))?(?:\+0x[0-9a-f]+)?(?: in (\S*?):(\d+))?\s*$")
NEAREST = re.compile(r"(and is .*)$")
OUT_OF_RANGE = re.compile(r"Address 0x[0-9a-f]+ is (out of bounds|misaligned|.*)$")
ADDRESS = re.compile(r" at 0x[0-9a-f]+")
LONG_HEX = re.compile(r"0x[0-9a-f]{8,}")
SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors?")
OTHER = re.compile(r"=+ ((?:Invalid|Misaligned|Out-of-range|Malloc|Cuda|Program hit|Hardware exception)[^\n]*)")


def parse(report: str) -> Finding | None:
    """The first error of a memcheck report; None when it holds none."""
    lines = report.splitlines()
    summary = next((int(m.group(1)) for m in map(SUMMARY.search, lines) if m), None)
    for k, line in enumerate(lines):
        match = ACCESS.search(line)
        if match:
            return _access(match, lines[k + 1:k + 8], summary)
    other = next((m.group(1) for m in map(OTHER.search, lines) if m), None)
    if other is None and not summary:
        return None
    return Finding(access=other or "invalid access", size=None, space="", kernel="a kernel", line=None, where="",
                   errors=summary)


def _access(match: re.Match, following: list[str], summary: int | None) -> Finding:
    """An invalid access and the lines after it: where (kernel, file line) and how far out."""
    finding = Finding(access=match.group(2), size=int(match.group(3)), space=match.group(1), kernel="a kernel",
                      line=None, where="", errors=summary)
    for text in (line.lstrip("= ").rstrip() for line in following):
        at, nearest = AT.match(text), NEAREST.search(text)
        if at and finding.kernel == "a kernel":
            finding.kernel, finding.line = at.group(1), int(at.group(3)) if at.group(3) else None
        if nearest:
            finding.where = nearest.group(1)
    return finding


def excerpt(report: str, limit: int = 1500) -> str:
    """The report's error lines without its banner, host frames and addresses."""
    kept = [LONG_HEX.sub("0x…", ADDRESS.sub("", line.lstrip("= ").rstrip())) for line in report.splitlines()
            if line.strip("= ") and "COMPUTE-SANITIZER" not in line and "Host Frame" not in line]
    return "\n".join(kept)[:limit]


def reason(finding: Finding | None, source: str, on: str) -> str:
    """In words a model can act on: which kernel, what access, which line, where it fell."""
    if finding is None:
        return f"Compute Sanitizer's memcheck found invalid memory accesses on {on} (its report was unreadable)"
    verb = {"read": "read", "write": "wrote", "atomic": "updated atomically"}.get(finding.access, finding.access)
    sized = f" {finding.size} bytes" if finding.size else ""
    line = ""
    if finding.line:
        lines = source.splitlines()
        code = lines[finding.line - 1].strip() if 0 < finding.line <= len(lines) else ""
        line = f" at line {finding.line}" + (f" (`{code[:160]}`)" if code else "")
    where = f": the address {ADDRESS.sub('', finding.where.removeprefix('and '))}" if finding.where else ""
    count = f"; {finding.errors} invalid accesses in all" if finding.errors and finding.errors > 1 else ""
    space = f" {finding.space.strip('_')} memory" if finding.space else " memory"
    return (f"on {on}, kernel `{finding.kernel}` {verb}{sized} out of bounds of{space}{line}{where}{count} "
            "(Compute Sanitizer memcheck, exact-size allocations; check the mask and the offsets)")


@dataclass
class Outcome:
    """What the run showed: `verdict` None (clean), "MEMORY_FAIL" or "RUNTIME_FAIL", with its reason;
    `ran` False where Compute Sanitizer itself did not start (then nothing was checked)."""

    verdict: str | None
    reason: str = ""
    ran: bool = True
    report: str = ""  # the sanitizer's first errors, as it printed them


Pending = tuple[int, Callable[[], Path], str]  # plan index, its inputs file once built, description


class MemcheckRun:
    """A process under Compute Sanitizer, started beside the candidate's correctness run and fed the
    checked cases as their inputs are built, so that its slow instrumented calls run while the
    candidate's cases and timing do; heard from once the candidate has passed and been timed. A
    thread of its own holds the conversation; the evaluation only hands it cases and asks the end."""

    POLL_SECONDS = 0.05

    def __init__(self, server: ForkServer, job: protocol.Job, source: str, limits: Limits, reach: Reach,
                 sanitizer: str):
        self.server, self.source = server, source
        job = dataclasses.replace(job, sanitizer=sanitizer)
        self.box = Sandbox(server, "memcheck", job, {"candidate.py": source}, limits, reach)
        self.described: dict[int, str] = {}
        self.exit_seconds = 0.0  # waiting for Compute Sanitizer to exit once the cases were done
        self._commands: queue.SimpleQueue = queue.SimpleQueue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._result: tuple[str | None, int | None] = (None, None)
        self._device = DeviceReadiness("the memory check's process could not set up its device")
        self._unavailable: DeviceUnavailable | None = None  # the device failed before candidate code ran

    def check(self, cases: list[tuple[int, Path, str]]) -> Outcome:
        """Runs `cases` ((plan index, inputs file, description)) and waits for what was found."""
        self.feed(lambda: sys.maxsize, [(i, lambda p=p: p, t) for i, p, t in cases])  # all built already
        return self.outcome()

    def feed(self, ready: Callable[[], int], cases: list[Pending]) -> None:
        """Sends each case once `ready()`, the number of plan cases built so far, passes its index."""
        self._thread = threading.Thread(target=self._converse, args=(ready, sorted(cases, key=lambda c: c[0])),
                                        name="memcheck", daemon=True)
        self._thread.start()

    def end(self, extra: list[tuple[int, Path, str]] = ()) -> None:
        """No case after the built ones and `extra` (say the one that faulted): the run finishes."""
        self._commands.put(list(extra))

    def outcome(self) -> Outcome:
        """Waits for the cases sent and Compute Sanitizer's exit: what it found. Raises
        DeviceUnavailable where the process could not set up its device before the candidate ran."""
        self.end()
        if self._thread is not None:
            self._thread.join()
        if self._unavailable is not None:
            raise self._unavailable
        failure, case = self._result
        began = time.perf_counter()
        exit_info = self.server.wait_exit(self.box.pid, EXIT_WAIT_SECONDS)
        self.exit_seconds = time.perf_counter() - began
        if exit_info is not None and exit_info.code == ERROR_EXIT:
            report = read_tail(self.box.scratch / REPORT, REPORT_BYTES).decode(errors="replace")
            on = self.described.get(case, "its small and edge inputs") if case is not None else "its small and edge inputs"
            return Outcome("MEMORY_FAIL", reason(parse(report), self.source, on), report=excerpt(report))
        return _without_report(self.box.connected is not None, failure, exit_info)

    def _converse(self, ready: Callable[[], int], pending: list[Pending]) -> None:
        done: set[int] = set()
        try:
            self._result = self._exchange(ready, pending, done) or (None, None)
        except DeviceUnavailable as unavailable:
            self._unavailable = unavailable
        except ChildGone as gone:  # the case under way when the process ended is the one to blame
            self._result = gone.reason, next((i for i in self.described if i not in done), None)
        except protocol.ProtocolError as exc:
            self._result = f"the process sent a malformed message ({exc})", None

    def _exchange(self, ready: Callable[[], int], pending: list[Pending], done: set[int]):
        """Sends cases as they are built and the end once asked; hears each case done. A failure
        (why, on which case) or None once every case sent is done."""
        ended = False
        while not self._stop.is_set():
            pending = self._send_built(ready, pending)
            if not ended and not self._commands.empty():
                self._send_built(ready, pending)  # whatever was built by the time the end was asked
                self._send_end(self._commands.get())
                pending, ended = [], True
            if ended and done >= self.described.keys():
                return None
            message = self.box.recv(timeout=self.POLL_SECONDS)
            if message is None:
                continue
            event = protocol.parse_event(message)
            failure = None if self._device.take(event) else _failure_in(event, self.described, done)
            if failure is not None:
                return failure
        return None

    def _send_end(self, extra: list[tuple[int, Path, str]]) -> None:
        for index, inputs, text in extra:
            self._send(index, inputs, text)
        self.box.send(protocol.encode(protocol.CasesEnd()))

    def _send_built(self, ready: Callable[[], int], pending: list[Pending]) -> list[Pending]:
        """Sends the pending cases built by now; those still to be built."""
        try:
            built = ready()
        except Exception:  # noqa: BLE001 - a case that failed to build: the evaluation reports it
            return []
        while pending and pending[0][0] < built:
            index, inputs, text = pending.pop(0)
            self._send(index, inputs(), text)
        return pending

    def _send(self, index: int, inputs: Path, text: str) -> None:
        if index not in self.described:
            self.described[index] = text
            self.box.send(protocol.encode(protocol.RunCase(index=index, inputs=str(inputs))))

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.box.close()

    def __enter__(self) -> "MemcheckRun":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _without_report(started: bool, failure: str | None, exit_info: ExitInfo | None) -> Outcome:
    """The outcome where Compute Sanitizer found nothing: clean, the candidate's failure, or no check."""
    if not started:
        why = (failure or "it did not start").splitlines()[0][:300]
        return Outcome(None, f"compute-sanitizer did not start: {why}", ran=False)
    if failure is not None:
        return Outcome("RUNTIME_FAIL", "under Compute Sanitizer: " + failure)
    if exit_info is None or exit_info.code not in (0, None):
        state = exit_info.describe("compute-sanitizer") if exit_info else "compute-sanitizer did not exit"
        return Outcome("RUNTIME_FAIL", f"under Compute Sanitizer: {state}")
    return Outcome(None)


def _failure_in(message: object, described: dict[int, str], done: set[int]) -> tuple[str, int | None] | None:
    """A message of the run: a case done (added to `done`), or a failure with its case."""
    if isinstance(message, protocol.MemoryChecked) and message.case in described:
        done.add(message.case)
    elif isinstance(message, protocol.Failed):
        where = described.get(message.case) if message.case is not None else None
        return (f"on {where}: " if where else "") + message.reason, message.case
    elif not isinstance(message, protocol.Imported):
        return "the process sent an unexpected message", None
    return None
