"""The evaluator's side of process isolation: one sandboxed child at a time, started by the fork server.

A child gets a scratch directory, a Unix socket back to the evaluator, a wall-clock deadline and a
memory ceiling (RLIMIT_AS on the CPU; a resident-memory watchdog on the GPU, where CUDA's address
space reservations make RLIMIT_AS unusable). Whatever happens to it (crash, hang, exit, memory
blow-up) becomes a `ChildGone` carrying a reason in words.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from evaluator import confinement, event_log, isolation, protocol, wire
from evaluator.fork_server import ForkServer, ForkServerError
from evaluator.result import Verdict
from evaluator.stage_failed import StageFailed

OUTPUT_TAIL_BYTES = 2000
CONFINED_KINDS = ("candidate", "scout", "memcheck", "ir_compile")  # those that run candidate code or read what it made
FOOTPRINT_PERIOD = 0.25  # seconds between scans of a child's process tree and memory
# The scratch disk is scanned before a child writing at DISK_FILL_RATE could pass its limit, and at
# least every DISK_PERIOD_MAX seconds: a walk of its folders costs the evaluator more than a look at
# its memory, and a child far below its limit needs no scan four times a second.
DISK_FILL_RATE = 16 << 30  # bytes per second: several threads copying into tmpfs
DISK_PERIOD_MAX = 2.0
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


_CHILDREN_FILES = os.path.exists(f"/proc/self/task/{os.getpid()}/children")
_STATM_FILES = os.path.exists("/proc/self/statm")


def process_tree(pid: int) -> list[int]:
    """The process and its descendants. Read from each thread's /proc children list, which costs a
    few files per process in the tree; psutil's way scans every process on the machine, and the
    evaluator checks every sandbox's tree four times a second."""
    if not _CHILDREN_FILES:
        try:
            return [pid, *(child.pid for child in psutil.Process(pid).children(recursive=True))]
        except psutil.Error:
            return []
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        try:
            threads = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue  # gone meanwhile
        tree.append(current)
        for thread in threads:
            try:
                with open(f"/proc/{current}/task/{thread}/children") as listing:
                    todo.extend(int(child) for child in listing.read().split())
            except (OSError, ValueError):
                continue
    return tree


def with_last_line(reason: str, output_tail: str) -> str:
    """The reason, followed by the child's last line of output (an uncaught error's last line says
    what it was), unless the reason already ends with it."""
    last = (output_tail.strip().splitlines() or [""])[-1]
    return f"{reason}: {last}" if last and not reason.endswith(last) else reason


def scratch_root() -> Path:
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())


def read_tail(path: Path, limit: int) -> bytes:
    """The last `limit` bytes of a file that a candidate's process could have replaced: read only if it
    is a regular file (never through a link, never from a pipe that would block)."""
    try:
        fd = wire.open_regular(path)
    except OSError:
        return b""
    try:
        size = os.fstat(fd).st_size
        os.lseek(fd, max(0, size - limit), os.SEEK_SET)
        return os.read(fd, limit)
    finally:
        os.close(fd)


def scratch_bytes(folder: Path) -> int:
    total = 0
    for root, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


def process_stat(pid: int) -> tuple[str, list[str]] | None:
    """A process's name and the fields of /proc/PID/stat after it (utime is [11]); None once gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            text = stat.read()
    except OSError:
        return None
    return text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()


def tree_cpu_seconds(pid: int) -> float | None:
    """User and system time of a running process tree: each process's own (utime, stime), and that
    of the processes each has reaped (cutime, cstime); None once the process is gone."""
    stats = [s for s in map(process_stat, process_tree(pid)) if s is not None]
    if not stats:
        return None
    return sum(int(v) for _, fields in stats for v in fields[11:15]) / CLOCK_TICKS


def next_disk_scan(written: int, limit: int) -> float:
    """Seconds until the scratch disk is scanned again, `written` bytes of `limit` being used now."""
    return min(DISK_PERIOD_MAX, max(FOOTPRINT_PERIOD, (limit - written) / DISK_FILL_RATE))


def resident_bytes(pid: int) -> int:
    """The process's resident memory, from one small /proc file where there is one; 0 once it is gone."""
    try:
        if not _STATM_FILES:
            return psutil.Process(pid).memory_info().rss
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * PAGE_BYTES
    except (OSError, ValueError, IndexError, psutil.Error):
        return 0


def tree_memory(tree: list[int], limit: int) -> int:
    """What a process tree holds, as exactly as `limit` needs it. Resident sizes summed are read
    cheaply and bound the truth from above; only a tree of several processes whose sum passes the
    limit is measured by proportional set size (each page shared since a fork split among its users),
    which reads every mapping of every process and costs the evaluator far more."""
    resident = sum(resident_bytes(pid) for pid in tree)
    if len(tree) < 2 or resident <= limit:
        return resident
    total = 0
    for pid in tree:
        try:
            total += psutil.Process(pid).memory_full_info().pss
        except psutil.Error:
            continue
    return total


class ChildGone(StageFailed):
    """The child stopped answering: it exited, crashed, timed out or used too much memory. Its last
    output stands as the traceback."""

    def __init__(self, verdict: Verdict, reason: str, output_tail: str = "", out_of_gpu_memory: bool = False):
        super().__init__(verdict, reason, output_tail or None, out_of_gpu_memory=out_of_gpu_memory)
        self.output_tail = output_tail


class DeviceUnavailable(RuntimeError):
    """A confined process could not set up its device before any candidate code ran in it: the
    machine's failure, never the candidate's verdict."""


class DeviceReadiness:
    """Of a confined process's messages, tells a device failure said before its `device_ready`
    (sent before the candidate's module runs: the machine's, raised as DeviceUnavailable) from
    one said after it (the candidate's, left to the caller's verdict)."""

    def __init__(self, failing: str):
        self.failing = failing  # the error's words before the process's reason
        self.ready = False

    def take(self, message: object) -> bool:
        """True where the message was the device's `device_ready`; raises for a failure before it."""
        if isinstance(message, protocol.DeviceReady):
            self.ready = True
            return True
        if isinstance(message, protocol.Failed) and message.phase == "device" and not self.ready:
            raise DeviceUnavailable(f"{self.failing}: {message.reason}")
        return False


@dataclass
class Limits:
    """`step_seconds`: the longest the child may go without reporting progress (one call, the
    import, the timing phase); `total_seconds`: its whole life. Neither counts the time the child
    spends waiting for the GPU lock while other candidates are timed; `lock_wait_seconds` bounds
    all such waits together (the child reports its waits, so a lying child gains at most that)."""

    step_seconds: float = 60.0
    total_seconds: float = 600.0
    memory_bytes: int = 8 << 30
    file_bytes: int = 8 << 30
    disk_bytes: int = 8 << 30  # everything in the scratch directory together
    open_files: int = 1024
    processes: int = 64  # the candidate and everything it starts
    lock_wait_seconds: float = 1800.0
    # RLIMIT_AS enforces memory_bytes on the CPU; with CUDA it must be off (CUDA reserves huge
    # address ranges) and the resident-memory watchdog enforces it instead.
    address_space: bool = True


@dataclass(frozen=True)
class Reach:
    """What a process that runs candidate code may touch beyond its scratch folder: the evaluation's
    shared folders (writable), the inputs and the GPU lock (read-only), and the GPU's devices: the
    driver's and `gpu_node`, that GPU's own (gpu_node.py), or where it is None every GPU's."""

    writable: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    gpu: bool = False
    triton_cache: Path | None = None
    gpu_node: str | None = None

    def request(self) -> dict[str, Any]:
        return {"writable": (*(str(p) for p in self.writable), *benchmark_logs()), "readable": tuple(str(p) for p in self.readable),
                "gpu": self.gpu, "gpu_node": self.gpu_node if self.gpu else None,
                "triton_cache": str(self.triton_cache) if self.triton_cache else None}


def sandbox_folder(path: Path) -> Path:
    """A folder (made if missing) or a socket that a confined process must write: owned by the
    sandbox's user when the evaluator is root."""
    if not path.exists():
        path.mkdir()
    if os.geteuid() == 0:
        os.chown(path, confinement.SANDBOX_UID, confinement.SANDBOX_UID)
    return path


def benchmark_logs() -> list[str]:
    """The logs that the environment names (event_log.py), made for confined processes where missing."""
    return [str(sandbox_file(Path(os.environ[name]))) for name in event_log.VARIABLES if os.environ.get(name)]


def sandbox_file(path: Path) -> Path:
    """A file that confined processes append to, such as a benchmark's log. Made here if missing,
    and then, when the evaluator is root, given to the sandbox's user, as confined processes run as
    that user; a file that already exists is left as it is (its owner and mode are not the
    evaluator's to change, whatever path the variable names)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError:
        return path
    if os.geteuid() == 0:
        os.chown(path, confinement.SANDBOX_UID, confinement.SANDBOX_UID)
    return path


class Sandbox:
    """One child process: spawn it, exchange messages, enforce its limits, kill it. A child that runs
    candidate code (`reach` given) runs confined (confinement.py); `isolation` is what the evaluator
    measured of it once it connected."""

    def __init__(self, server: ForkServer, kind: str, job: protocol.Job, files: dict[str, str], limits: Limits,
                 reach: Reach | None = None):
        self.server = server
        self.scratch = Path(tempfile.mkdtemp(prefix="al-", dir=scratch_root()))
        self.limits = limits
        self.kind = kind
        on_gpu = job.device.startswith("cuda")
        self.reach = reach or (Reach(gpu=on_gpu) if kind in CONFINED_KINDS else None)
        self.isolation: isolation.Measured | None = None
        self.connected: float | None = None  # when the child connected (monotonic), before any candidate code ran
        self.started = time.monotonic()
        self.step_started = self.started
        for name, text in files.items():
            (self.scratch / name).write_text(text, encoding="utf-8")
        protocol.write_job(job, self.scratch / "job.json")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(self.scratch / "ctl.sock"))
        self.listener.listen(1)
        if self.reach is not None:
            sandbox_folder(self.scratch)
            sandbox_folder(self.scratch / "ctl.sock")
        rlimits = {"FSIZE": limits.file_bytes, "NOFILE": limits.open_files, "CORE": 0,
                   "CPU": int(4 * limits.total_seconds),
                   "AS_EXTRA": limits.memory_bytes if limits.address_space else None}
        self.pid = server.spawn(kind, self.scratch, rlimits, **(self.reach.request() if self.reach else {}))
        # per-process figures (GPU memory, say) can then be told apart by what the process was for
        event_log.append("AGENTLOOP_PROCESS_LOG", {"pid": self.pid, "kind": kind, "task": job.task,
                                                   "spawned": time.time()})
        self.conn: socket.socket | None = None
        self.buffer = b""
        self.unsent = b""
        self.footprint_checked = 0.0
        self.disk_due = 0.0
        self.cpu_seconds: float | None = None  # the child's CPU time, what it started included: read at close
        self.waiting_since: float | None = None
        self.waited = 0.0
        self.idle_since: float | None = None
        self.closed = False

    def _who(self) -> str:
        return "the baseline's process" if self.kind == "baseline" else "the candidate's process"

    def _lock_event(self, event: str) -> None:
        now = time.monotonic()
        if event == protocol.LockWaiting.EVENT and self.waiting_since is None:
            self.waiting_since = now
        elif event == protocol.LockHeld.EVENT and self.waiting_since is not None:
            waited, self.waiting_since = now - self.waiting_since, None
            self.waited += waited
            self._stop_clocks_for(waited)

    def _stop_clocks_for(self, seconds: float) -> None:
        self.started += seconds
        self.step_started += seconds

    def idle(self, waiting: bool) -> None:
        """The evaluator says whether the child now waits on it (for its next case): such time is
        not the child's, so its clocks stop until the evaluator sends more work."""
        now = time.monotonic()
        if waiting and self.idle_since is None:
            self.idle_since = now
        elif not waiting and self.idle_since is not None:
            self._stop_clocks_for(now - self.idle_since)
            self.idle_since = None

    def _check_alive(self) -> None:
        info = self.server.exit_info(self.pid)
        if info is not None and not self._drained_line():
            tail = self.output_tail()
            raise ChildGone(Verdict.RUNTIME_FAIL, with_last_line(info.describe(self._who()), tail), tail)
        now = time.monotonic()
        if self.waiting_since is not None:
            if self.waited + now - self.waiting_since > self.limits.lock_wait_seconds:
                self.kill()
                raise ChildGone(Verdict.TIMEOUT, f"waited more than {self.limits.lock_wait_seconds:.0f} s in all for the GPU "
                                           "lock (the GPU is oversubscribed)", self.output_tail())
        elif self.idle_since is None and (now - self.step_started > self.limits.step_seconds
                                          or now - self.started > self.limits.total_seconds):
            self.kill()
            limit = (f"{self.limits.step_seconds:.0f} s per step" if now - self.started <= self.limits.total_seconds
                     else f"{self.limits.total_seconds:.0f} s in all")
            raise ChildGone(Verdict.TIMEOUT, f"exceeded the wall-clock limit of {limit} (an infinite loop, a deadlock, "
                                       "or far too slow)", self.output_tail())
        if now - self.footprint_checked < FOOTPRINT_PERIOD:
            return
        self.footprint_checked = now
        self._check_footprint()

    def _check_footprint(self) -> None:
        """Processes and memory (a scan of /proc), and, when due, the scratch disk: done every
        FOOTPRINT_PERIOD rather than on every poll."""
        tree = process_tree(self.pid)
        if len(tree) > self.limits.processes:
            self.kill()
            raise ChildGone(Verdict.RUNTIME_FAIL, f"started {len(tree)} processes (limit {self.limits.processes}); "
                                            "a kernel needs none", self.output_tail())
        if tree_memory(tree, self.limits.memory_bytes) > self.limits.memory_bytes:
            self.kill()
            raise ChildGone(Verdict.RUNTIME_FAIL, f"exceeded the memory limit of {self.limits.memory_bytes >> 20} MiB",
                            self.output_tail())
        now = time.monotonic()
        if now < self.disk_due:
            return
        written = sum(scratch_bytes(folder) for folder in (self.scratch, *(self.reach.writable if self.reach else ())))
        if written > self.limits.disk_bytes:
            self.kill()
            raise ChildGone(Verdict.RUNTIME_FAIL, f"wrote {written >> 20} MiB into its scratch directory (limit "
                                            f"{self.limits.disk_bytes >> 20} MiB): printed or saved far too much",
                            self.output_tail())
        self.disk_due = now + next_disk_scan(written, self.limits.disk_bytes)

    def recv(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The child's next message; None if `timeout` seconds pass without one."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            message = self._next_message(deadline)
            if message is None:
                return None
            if message.get("event") in protocol.LOCK_EVENTS:
                self._lock_event(message["event"])
                continue
            self.step_started = time.monotonic()
            return message

    def _receive(self) -> bytes:
        """The next bytes from the child, or b"" once its end is closed: a child killed with bytes
        still unread in its socket resets the connection instead of closing it."""
        try:
            return self.conn.recv(1 << 16)
        except ConnectionResetError:
            return b""

    def _drained_line(self) -> bool:
        """Reads what an exited child left in the channel: is a whole message there (its last word,
        a failure it reported before exiting, say)? A child that connected, spoke and exited before
        the evaluator first listened (a baseline started ahead) left its connection waiting."""
        if self.conn is None and select.select([self.listener], [], [], 0)[0]:
            self._accept()
        while self.conn is not None and select.select([self.conn], [], [], 0)[0]:
            chunk = self._receive()
            if not chunk:
                break
            self.buffer += chunk
        return b"\n" in self.buffer

    def _next_message(self, deadline: float | None = None) -> dict[str, Any] | None:
        while b"\n" not in self.buffer:
            if deadline is not None and time.monotonic() >= deadline:
                return None
            self._check_alive()
            if b"\n" in self.buffer:  # the last words of a child that has exited
                break
            self._listen(0.05)
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            raise ChildGone(Verdict.CONTRACT_FAIL, "the candidate's process sent a malformed message") from None
        if not isinstance(message, dict):
            raise ChildGone(Verdict.CONTRACT_FAIL, "the candidate's process sent a malformed message")
        return message

    def _listen(self, timeout: float) -> None:
        """Waits up to `timeout` for the child to connect or speak; what it says joins the buffer."""
        if self.conn is None:
            if select.select([self.listener], [], [], timeout)[0]:
                self._accept()
            return
        if not select.select([self.conn], [], [], timeout)[0]:
            return
        chunk = self._receive()
        if not chunk:
            info = self.server.wait_exit(self.pid, timeout=5)
            reason = info.describe(self._who()) if info else f"{self._who()} closed its channel"
            raise ChildGone(Verdict.RUNTIME_FAIL, reason, self.output_tail())
        self.buffer += chunk

    def _accept(self) -> None:
        """The child connects before it runs any candidate code: what it runs under is measured then."""
        self.conn, _ = self.listener.accept()
        self.connected = time.monotonic()
        if self.reach is not None:
            self.isolation = isolation.measured(isolation.confined_process(self.pid))
        self._flush()

    def send(self, message: dict[str, Any]) -> None:
        """Sent now, or as soon as the child connects."""
        self.step_started = time.monotonic()
        self.unsent += json.dumps(message).encode() + b"\n"
        self._flush()

    def _flush(self) -> None:
        if self.conn is None or not self.unsent:
            return
        try:
            self.conn.sendall(self.unsent)
        except OSError:
            pass
        self.unsent = b""

    def output_tail(self) -> str:
        return read_tail(self.scratch / "output.txt", OUTPUT_TAIL_BYTES).decode(errors="replace")

    def kill(self) -> None:
        """The child's whole session, then anything of its tree that left the session."""
        try:
            stragglers = psutil.Process(self.pid).children(recursive=True)
        except psutil.Error:
            stragglers = []
        for target in (lambda: os.killpg(self.pid, signal.SIGKILL), lambda: os.kill(self.pid, signal.SIGKILL)):
            try:
                target()
                break
            except (ProcessLookupError, PermissionError):
                continue
        for process in stragglers:
            try:
                process.kill()
            except psutil.Error:
                pass

    def close(self) -> None:
        """Kills the child if it still runs, without waiting for it to go: everything it was for has
        been read by now, and a process that held a CUDA context took seconds to exit on a loaded
        GPU. The fork server reaps it."""
        if self.closed:
            return
        self.closed = True
        exited = self.server.exit_info(self.pid)
        self.cpu_seconds = exited.cpu_seconds if exited is not None else tree_cpu_seconds(self.pid)
        if exited is None:
            self.kill()
        self.server.forget(self.pid)
        for s in (self.conn, self.listener):
            if s is not None:
                s.close()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def confinement_now(server: ForkServer, limits: Limits) -> isolation.Measured | None:
    """What a confined process gets on this machine, measured on one that runs no candidate code
    (and starts no CUDA); None where it could not be measured (the evaluation that next spawns a
    process says why)."""
    job = protocol.Job(task="confinement", entry="nothing", device="cpu")
    try:
        with Sandbox(server, "candidate", job, {"candidate.py": "def nothing():\n    pass\n"}, limits, Reach()) as box:
            box.recv(timeout=60)
            return box.isolation
    except (ChildGone, ForkServerError, OSError):
        return None
