"""The evaluator's handle on its fork server (sandboxed/fork_server_process.py): started with an
environment scrubbed of anything secret-looking, it forks every sandboxed process and reports how
each exited."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator import protocol, triton_cache

PROJECT_ROOT = Path(__file__).resolve().parent.parent
KEPT_ENV = re.compile(r"^(PATH|HOME|USER|LOGNAME|LANG|LC_[A-Z]+|TZ|TMPDIR|PYTHONPATH|VIRTUAL_ENV|"
                      r"CUDA_[A-Z_]+|NVIDIA_[A-Z_]+|LD_LIBRARY_PATH|TRITON_[A-Z_]+|TORCH_[A-Z_]+|"
                      r"TORCHINDUCTOR_[A-Z_]+|OMP_NUM_THREADS|MKL_[A-Z_]+|XDG_CACHE_HOME|NCCL_[A-Z_]+|"
                      r"NVSHMEM_[A-Z_]+|AGENTLOOP_LOCK_LOG|AGENTLOOP_PROCESS_LOG)$")
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)


def scrubbed_environment(environ: dict[str, str]) -> dict[str, str]:
    """Only variables a kernel's toolchain needs; nothing that looks like a secret."""
    return {k: v for k, v in environ.items() if KEPT_ENV.match(k) and not SECRET_NAME.search(k)}


def secret_values(environ: dict[str, str]) -> list[str]:
    """Values of secret-looking variables, to redact from anything a candidate could echo back."""
    return sorted({v for k, v in environ.items() if SECRET_NAME.search(k) and len(v) >= 6}, key=len, reverse=True)


class ForkServerError(RuntimeError):
    pass


@dataclass
class ExitInfo:
    code: int | None
    signal: int | None
    cpu_seconds: float | None = None  # the process's and its reaped descendants' user and system time

    def describe(self, process: str = "the candidate's process") -> str:
        if self.signal is not None:
            name = signal.Signals(self.signal).name if self.signal in signal.Signals._value2member_map_ else str(self.signal)
            return f"{process} was killed by {name}"
        return f"{process} exited with status {self.code} before finishing"


class ForkServer:
    """Starts `python -m evaluator.sandboxed.fork_server_process` with a scrubbed environment and talks to it."""

    def __init__(self, interpret: bool, triton_stubs: Path | None = None, hidden: tuple[Path, ...] = ()):
        """`triton_stubs`: a folder for the Triton driver helper that the server builds once and the
        processes it confines read (triton_cache.py). `hidden`: folders the processes it confines see
        empty, even inside folders they may read."""
        self.interpret = interpret
        self.triton_stubs = triton_stubs
        self.hidden = hidden
        self._lock = threading.Lock()
        self._replies: dict[int, Any] = {}
        self._exits: dict[int, ExitInfo] = {}
        self._forgotten: set[int] = set()  # children closed before their exit was reported
        self._cond = threading.Condition()
        self._next_id = 0
        self._proc: subprocess.Popen | None = None
        self._stopped = False

    def _start(self) -> None:
        env = scrubbed_environment(dict(os.environ))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH")]))
        if self.triton_stubs is not None:
            self.triton_stubs.mkdir(parents=True, exist_ok=True)
            self.triton_stubs.chmod(0o755)  # read by confined processes, which may run as another uid
            env[triton_cache.STUBS_VARIABLE] = str(self.triton_stubs)
        if self.interpret:
            env["TRITON_INTERPRET"] = "1"
        else:
            env.pop("TRITON_INTERPRET", None)
        self._forgotten.clear()  # the children of a fork server that died died with it
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen([sys.executable, "-m", "evaluator.sandboxed.fork_server_process"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._stderr, env=env, cwd=str(PROJECT_ROOT))
        first = self._proc.stdout.readline()
        if not first or not isinstance(protocol.parse_server_event(json.loads(first)), protocol.ServerReady):
            self._stderr.seek(0)
            raise ForkServerError("the fork server failed to start: " + self._stderr.read().decode()[-2000:])
        threading.Thread(target=self._read, args=(self._proc,), daemon=True).start()

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            message = protocol.parse_server_event(json.loads(line))
            with self._cond:
                if isinstance(message, protocol.Exited) and message.pid in self._forgotten:
                    self._forgotten.discard(message.pid)
                elif isinstance(message, protocol.Exited):
                    self._exits[message.pid] = ExitInfo(message.code, message.signal, message.cpu_s)
                elif isinstance(message, protocol.Spawned):
                    self._replies[message.id] = message.pid
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def spawn(self, kind: str, scratch: Path, limits: dict[str, int | None], **confined: Any) -> int:
        """`confined`: for processes that run candidate code, what confinement.View they see (writable,
        readable), whether they get the GPU's devices (gpu) and their Triton cache (triton_cache)."""
        with self._lock:
            if self._stopped:
                raise ForkServerError("the fork server was stopped")
            if not self.alive():
                self._start()
            self._next_id += 1
            request_id = self._next_id
            if confined and self.triton_stubs is not None:
                confined = {**confined, "readable": (*confined.get("readable", ()), str(self.triton_stubs))}
            if confined and self.hidden:
                confined = {**confined, "emptied": tuple(str(p) for p in self.hidden)}
            request = protocol.Spawn(id=request_id, kind=kind, scratch=str(scratch), limits=limits, **confined)
            self._proc.stdin.write((json.dumps(protocol.encode(request)) + "\n").encode())
            self._proc.stdin.flush()
        with self._cond:
            if not self._cond.wait_for(lambda: request_id in self._replies or not self.alive(), timeout=60):
                raise ForkServerError("the fork server did not answer")
            if request_id not in self._replies:
                raise ForkServerError("the fork server died")
            return self._replies.pop(request_id)

    def exit_info(self, pid: int) -> ExitInfo | None:
        with self._cond:
            return self._exits.get(pid)

    def forget(self, pid: int) -> None:
        with self._cond:
            if self._exits.pop(pid, None) is None:
                self._forgotten.add(pid)

    def wait_exit(self, pid: int, timeout: float) -> ExitInfo | None:
        with self._cond:
            self._cond.wait_for(lambda: pid in self._exits or not self.alive(), timeout=timeout)
            return self._exits.get(pid)

    def stop(self) -> None:
        """Kills the server and every process it started, and starts no other: spawn() raises from now on."""
        with self._lock:  # not between a spawn's check that the server lives and its request
            self._stopped = True
            self.close()

    def close(self) -> None:
        """Stops the server at once: it holds nothing to save, and its children die with it. (Left
        to exit on its own, tearing down its interpreter with torch loaded took about a second.)"""
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            try:
                self._proc.stdin.close()
            except OSError:
                pass
            self._proc = None
