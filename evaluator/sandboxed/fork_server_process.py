"""Fork server: a process with torch and triton imported (CUDA untouched) that forks one child per
evaluation, so each candidate starts in a clean process in milliseconds.

On stdin and stdout, one JSON object per line, each a type of evaluator/protocol.py: the evaluator
sends Spawn (a child of kind candidate, scout, memcheck or baseline, its scratch folder, its limits
and, for a child that runs candidate code, what it may see); the server answers ServerReady once,
Spawned (id, pid) for each Spawn, and Exited (pid, exit code or signal) for each child that ends.
The server was started with a scrubbed environment; each child starts a new session (so it can be
killed as a group), dies with the server, closes every inherited descriptor, and runs under
resource limits with its stdout and stderr in its scratch directory.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import selectors
import signal
import sys
import traceback

from evaluator import protocol

PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15
NAME_PREFIX = "al-"  # a child's process name: al-candidate, al-scout, al-baseline, ...
# A process that runs candidate code does its work on the GPU or in one thread of Python; a pool of
# CPU threads per process (one per core by default, busy-waiting after each parallel region, in
# every such process at once) only competes with the other evaluations for the machine's cores.
# The baseline's process keeps the evaluator's setting: eager PyTorch is timed as a user runs it.
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
# CUDA makes its contexts one at a time across the whole machine, whichever GPU they are on, and
# every evaluation makes two (its candidate's process and its memory check's). A context with one
# hardware work queue (CUDA's default is eight) is made in about half the time: 16 processes at
# once on a 4 x H200 host made 5.8 contexts a second against 2.8. Streams of one process then share
# that queue (kernels on two streams no longer overlap); an evaluator whose environment sets the
# variable gives its own value instead.
CUDA_CONNECTIONS = ("CUDA_DEVICE_MAX_CONNECTIONS", "1")
RLIMITS = {
    "AS": resource.RLIMIT_AS,
    "FSIZE": resource.RLIMIT_FSIZE,
    "NPROC": resource.RLIMIT_NPROC,
    "NOFILE": resource.RLIMIT_NOFILE,
    "CORE": resource.RLIMIT_CORE,
    "CPU": resource.RLIMIT_CPU,
}


def preload() -> None:
    import numpy  # noqa: F401
    import torch  # noqa: F401
    import triton  # noqa: F401
    import triton.language  # noqa: F401
    # torch imports its compiler stack lazily, at the first torch call under a dispatch mode (the
    # candidate's guard): seconds per child, paid once here instead
    import torch._dynamo  # noqa: F401

    from evaluator import compile_scout, confinement, triton_cache  # noqa: F401
    from evaluator.sandboxed import baseline_process, candidate_process  # noqa: F401
    try:
        import pyseccomp  # noqa: F401
    except (ImportError, OSError, RuntimeError):
        pass  # confinement says so for each child

    # Triton's cache key hashes its own sources and its 100+ MB compiler library at a process's first
    # compile (0.4 s of every candidate's on an H100 host): hashed once here, children inherit it.
    # The interpreter compiles nothing, and never asks for it.
    if os.environ.get("TRITON_INTERPRET") != "1":
        triton_cache.own_key()


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _address_space_now() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _apply_limits(limits: dict) -> None:
    """Set rlimits; AS_EXTRA means RLIMIT_AS at what is mapped now plus that many bytes."""
    limits = dict(limits)
    extra = limits.pop("AS_EXTRA", None)
    if extra is not None:
        limits["AS"] = _address_space_now() + int(extra)
    for name, value in limits.items():
        if name in RLIMITS and value is not None:
            try:
                resource.setrlimit(RLIMITS[name], (int(value), int(value)))
            except (ValueError, OSError):
                pass


def _name_process(kind: str) -> None:
    """Its kind as the process's name (what ps and /proc/PID/comm show), for telling children apart
    by what they are for; the name is for reading, never trusted (the process may rename itself)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, (NAME_PREFIX + kind).encode()[:15])
    except (OSError, AttributeError):
        pass


def _redirect_output(scratch: str) -> None:
    null = os.open(os.devnull, os.O_RDONLY)
    log = os.open(os.path.join(scratch, "output.txt"), os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.closerange(3, 65536)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)


def _confine(request: protocol.Spawn) -> None:
    """Candidate code runs only behind the OS boundary (confinement.py), with a private Triton cache
    shared by the processes of its own evaluation alone."""
    from evaluator import confinement, gpu_node, triton_cache

    _one_thread()
    os.environ.setdefault(*CUDA_CONNECTIONS)  # CUDA not started yet: read when it is, here and in the memory check
    view = confinement.View(writable=request.writable, readable=request.readable, emptied=request.emptied)
    applied = confinement.confine(request.scratch, view, gpu=request.gpu, gpu_node=request.gpu_node)
    if request.gpu and request.gpu_node and applied.root:
        os.environ[gpu_node.ONE_GPU_VARIABLE] = "1"  # its GPU is the only one there: device 0
        os.environ.pop("CUDA_VISIBLE_DEVICES", None)  # numbers GPUs of the host, not of this root
    os.environ["HOME"] = os.environ["TMPDIR"] = "/tmp"
    os.environ["XDG_CACHE_HOME"] = "/tmp/.cache"
    triton_cache.use_layers(request.triton_cache or "/tmp/.triton-cache", os.environ.get(triton_cache.STUBS_VARIABLE))


def _one_thread() -> None:
    """For this process (torch is loaded already) and any it starts afresh (the memory check's)."""
    import torch

    os.environ.update(ONE_THREAD)
    torch.set_num_threads(1)


def _become_child(request: protocol.Spawn) -> None:
    scratch = request.scratch
    os.setsid()
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _die_with_parent()
    _name_process(request.kind)
    _redirect_output(scratch)
    if request.kind in ("candidate", "scout", "memcheck", "ir_compile"):  # the candidate's code, or what it made
        _confine(request)
    _apply_limits(request.limits)
    if request.kind == "memcheck":
        from evaluator import memcheck, triton_cache
        os.environ[triton_cache.KEY_VARIABLE] = triton_cache.own_key() or ""
        memcheck.exec_sanitizer(scratch, protocol.read_job(os.path.join(scratch, "job.json")).sanitizer)
    elif request.kind == "baseline":
        from evaluator.sandboxed import baseline_process
        baseline_process.main(scratch)
    elif request.kind == "scout":
        from evaluator import compile_scout
        compile_scout.main(scratch)
    elif request.kind == "ir_compile":
        from evaluator.sandboxed import ir_compile_process
        ir_compile_process.main(scratch)
    elif request.kind == "interpreter_probe":  # the project's own kernels (interpreter_probe.py)
        from evaluator import interpreter_probe
        interpreter_probe.main()
    else:
        from evaluator.sandboxed import candidate_process
        candidate_process.main(scratch)


def _fork(request: protocol.Spawn) -> int:
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            _become_child(request)
        except BaseException:  # noqa: BLE001 - report and leave, whatever happened
            traceback.print_exc()
            code = 70
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    return pid


def _write(message) -> None:
    os.write(1, (json.dumps(protocol.encode(message)) + "\n").encode())


def _reap() -> None:
    while True:
        try:
            pid, status, usage = os.wait3(os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        code = os.waitstatus_to_exitcode(status)
        _write(protocol.Exited(pid=pid, code=code if code >= 0 else None, signal=-code if code < 0 else None,
                               cpu_s=round(usage.ru_utime + usage.ru_stime, 3)))


def serve() -> None:
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ, "stdin")
    selector.register(wake_r, selectors.EVENT_READ, "wake")
    pending = b""
    _write(protocol.ServerReady(pid=os.getpid()))
    while True:
        for key, _ in selector.select():
            if key.data == "wake":
                os.read(wake_r, 4096)
                _reap()
                continue
            chunk = os.read(0, 65536)
            if not chunk:
                return  # the evaluator is gone; children die with us (PR_SET_PDEATHSIG)
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = protocol.parse_spawn(json.loads(line))
                _write(protocol.Spawned(id=request.id, pid=_fork(request)))
        _reap()


def _build_triton_stubs() -> None:
    """Triton's driver helper, built once into the trusted stubs folder (triton_cache.py) by a child
    that runs no candidate code, beside the first candidates: until it is there, they build their own."""
    from evaluator import triton_cache

    stubs = os.environ.get(triton_cache.STUBS_VARIABLE)
    if not stubs or os.environ.get("TRITON_INTERPRET") == "1" or os.fork() != 0:
        return
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # never the fork server's channel to the evaluator
            os.dup2(null, fd)
        triton_cache.build_stubs(stubs)
    except BaseException:  # noqa: BLE001 - without stubs, candidates build their own
        pass
    finally:
        os._exit(0)


def main() -> None:
    preload()
    _build_triton_stubs()
    serve()


if __name__ == "__main__":
    main()
