"""The compile scout: a throwaway sandboxed process that runs the candidate on each case's inputs
with every Triton launch turned into a compile, many at once on threads, into Triton's on-disk
cache. The candidate's own process meets the same kernels one call at a time and loads them from
that cache instead of compiling them one after another (Normalization/batch_norm's reference
compiles 52 specializations).

The scout never touches the GPU: CUDA is hidden from it, the inputs are meta tensors (shapes,
strides and dtypes without data, which is all a kernel's specialization depends on), and Triton
runs on a compile-only driver for the evaluator's GPU target. So it holds no GPU lock, no CUDA
context and no GPU memory. Nothing it computes is judged or kept; whatever state the candidate
builds from meta tensors dies with the process. It is forked like the candidate's process (same
limits, scratch directory, scrubbed environment, no network) and fails silently: a scout that
crashes only leaves the compiling to the candidate.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

import torch

from evaluator import protocol, wire
from evaluator.compile_markers import CompileMarkers, marker_name
from evaluator.task import on_device
from evaluator.sandboxed.candidate_process import import_candidate
from evaluator.sandboxed.channel import Channel

META = torch.device("meta")
SCOUT_NICE = 10
ASK_SECONDS = 10.0  # the evaluator answers from a file read; past this the scout compiles itself
# The IR's source locations name the candidate's file, in a scratch folder of its own in every
# evaluation: asked under one name, the same kernel is the same IR (the name is debug information).
SCRATCH_STAND_IN = "/candidate"


def compile_threads() -> int:
    """Threads compiling at once: Triton's compiler lets go of the GIL in its MLIR and LLVM passes
    and waits on ptxas, so threads scale; a quarter of the cores each, as every candidate in flight
    has a scout of its own."""
    return min(8, max(2, (os.cpu_count() or 2) // 4))


def gpu_target(device: torch.device) -> dict[str, Any] | None:
    """The Triton target of an NVIDIA GPU, for the job (None elsewhere: no scout)."""
    if device.type != "cuda" or torch.version.cuda is None:
        return None
    major, minor = torch.cuda.get_device_capability(device)
    return {"backend": "cuda", "arch": 10 * major + minor, "warp_size": 32}


class CompileOnlyDriver:
    """What Triton's launch path asks of its driver before a compile (the target, a device and a
    stream), answered without a GPU."""

    def __init__(self, target):
        self.target = target

    def get_current_target(self):
        return self.target

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int | None = None) -> int:
        return 0


def yield_cpu() -> None:
    """Compiling ahead comes after the evaluator, candidates holding the GPU lock and timing: the
    scout runs at a lower priority (on Linux the nice value is per thread; threads and the ptxas
    processes they start inherit it). Where the kernel groups each session's processes for the
    scheduler (autogroup, on by default on desktop and many server kernels), a process's nice value
    weighs only against its own session, and every sandboxed child is a session of its own: the
    group's nice value is set too."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, SCOUT_NICE)
    except (OSError, AttributeError):
        pass
    try:
        with open("/proc/self/autogroup", "w") as group:
            group.write(str(SCOUT_NICE))
    except OSError:
        pass  # no autogroup here: the nice value alone orders the scheduler


class Scout:
    """Patches Triton's launch path: a launch on the scout's main thread becomes a warm-up whose
    compile, if Triton has the kernel nowhere yet, goes to a thread pool instead, once per
    specialization."""

    def __init__(self, threads: int, board: CompileMarkers | None = None):
        self.board = board
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="scout compile")
        self.main = threading.get_ident()
        self.seen: set[str] = set()
        self.compiles: list[Future] = []
        self._launch: tuple[Any, tuple, dict] | None = None
        self._original_run: Callable | None = None

    def install(self, target: dict[str, Any]) -> bool:
        try:
            from triton import knobs
            from triton.backends.compiler import GPUTarget
            from triton.runtime.driver import driver
            from triton.runtime.jit import JITFunction
        except ImportError:
            return False  # a Triton without knobs: the candidate compiles everything itself
        driver.set_active(CompileOnlyDriver(GPUTarget(target["backend"], target["arch"], target["warp_size"])))
        self._original_run = JITFunction.run
        scout = self

        def run(fn, *args, **kwargs):
            return scout.launch(fn, args, kwargs)

        JITFunction.run = run
        knobs.runtime.jit_cache_hook = self.cache_miss
        self._patch_autotuner()
        return True

    def _patch_autotuner(self) -> None:
        """An autotuned kernel would time every config with launches that do nothing here; each
        config is compiled instead."""
        try:
            from triton.runtime.autotuner import Autotuner
        except ImportError:
            return

        def run(tuner, *args, **kwargs):
            for config in tuner.configs:
                tuner.fn.run(*args, **{**kwargs, **config.all_kwargs()})

        Autotuner.run = run

    def launch(self, fn, args: tuple, kwargs: dict):
        if kwargs.get("warmup") or threading.get_ident() != self.main:
            return self._original_run(fn, *args, **kwargs)
        self._launch = (fn, args, kwargs)
        try:
            return self._original_run(fn, *args, **{**kwargs, "warmup": True})
        finally:
            self._launch = None

    def cache_miss(self, *, key: Any, fn: Any = None, **_: Any) -> bool | None:
        """Triton's hook before it compiles: True skips the compile. On the pool's threads it goes ahead."""
        if threading.get_ident() != self.main or self._launch is None:
            return None
        kernel, args, kwargs = self._launch
        name = marker_name(fn, key)
        if name not in self.seen:
            self.seen.add(name)
            if self.board is not None:
                self.board.claim(name)
            self.compiles.append(self.pool.submit(self._compile, name, kernel, args, kwargs))
        return True

    def _compile(self, name: str, kernel, args: tuple, kwargs: dict) -> None:
        try:
            self._original_run(kernel, *args, **{**kwargs, "warmup": True})
        finally:
            if self.board is not None:
                self.board.settle(name)

    def finish(self) -> tuple[int, int]:
        """Waits for every compile: (compiled, failed)."""
        self.pool.shutdown(wait=True)
        failed = sum(1 for f in self.compiles if f.exception() is not None)
        return len(self.compiles) - failed, failed


class StoredStages:
    """In the scout: after Triton's IR stage, `ask(ir_text, options)` for the kernel compiled from
    that IR elsewhere (evaluator/ir_store.py); an answer stands in for the backend's later stages,
    so Triton's own compile loop writes it into the evaluation's cache as if it had compiled it. No
    answer, or options beyond a launch's: the backend compiles as usual."""

    def __init__(self, ask: Callable[[str, dict[str, Any]], Any]):
        self.ask = ask

    def install(self) -> bool:
        try:
            from triton.backends.nvidia.compiler import CUDABackend
        except ImportError:
            return False
        original, stored = CUDABackend.add_stages, self

        def add_stages(backend, stages, options, *args, **kwargs):
            original(backend, stages, options, *args, **kwargs)
            stored.stand_in(backend, stages, options)

        CUDABackend.add_stages = add_stages
        return True

    def stand_in(self, backend, stages: dict, options) -> None:
        from evaluator.ir_store import OPTIONS, OWN_METADATA, STAGES

        sent = {name: getattr(options, name) for name in OPTIONS if hasattr(options, name)}
        if "ttir" not in stages or not all(stage in stages for stage in STAGES):
            return  # not a Triton kernel's compile (Gluon's starts at its own IR)
        if backend.parse_options(dict(sent)) != options:
            return
        own, found = {stage: stages[stage] for stage in STAGES}, []

        def first(module, metadata):
            answer = self.ask(str(module), sent)
            if answer is None:
                return own[STAGES[0]](module, metadata)
            found.append(answer)
            metadata.update({k: v for k, v in answer.metadata.items() if k not in OWN_METADATA})
            return answer.stages[STAGES[0]].decode()

        def later(stage: str):
            def run(module, metadata):
                if not found:
                    return own[stage](module, metadata)
                content = found[0].stages[stage]
                return content if stage == "cubin" else content.decode()
            return run

        stages[STAGES[0]] = first
        for stage in STAGES[1:]:
            stages[stage] = later(stage)


def scout_call(entry: Callable, inputs_file: str) -> None:
    """One dry call on meta inputs; whatever the candidate raises on them is its own business."""
    try:
        inputs = on_device(wire.load(inputs_file, META), META)  # only the file's tensor headers are read
        entry(*inputs.args, **inputs.kwargs)
    except BaseException:  # noqa: BLE001 - the candidate's own process will meet it for real
        pass


class EvaluatorLine:
    """The scout's channel, shared by its main thread (the cases, one after another) and its
    compile threads (each asking the evaluator for a stored compile and waiting for the answer): a
    reader thread routes what the evaluator sends."""

    def __init__(self, channel: Channel, scratch: Path):
        self.channel, self.scratch = channel, scratch
        self.sending = threading.Lock()
        self.commands: queue.Queue[Any] = queue.Queue()
        self.answers: dict[int, Future] = {}
        self.asked = itertools.count()
        self.answered = 0  # counted by the compile threads
        self._counting = threading.Lock()
        threading.Thread(target=self._route, name="scout channel", daemon=True).start()

    def _route(self) -> None:
        while True:
            try:
                command = protocol.parse_command(self.channel.recv())
            except (EOFError, OSError, ValueError, protocol.ProtocolError):
                self.commands.put(None)
                return
            waiting = self.answers.pop(command.id, None) if isinstance(command, protocol.IRAnswer) else None
            if waiting is not None:
                waiting.set_result(command.folder)
            elif not isinstance(command, protocol.IRAnswer):
                self.commands.put(command)

    def next_command(self) -> Any:
        return self.commands.get()

    def send(self, message: Any) -> None:
        with self.sending:
            self.channel.send(protocol.encode(message))

    def ask(self, ir_text: str, options: dict[str, Any]) -> Any:
        """The evaluator's stored compile of this IR, or None (on no answer within ASK_SECONDS too)."""
        from evaluator.ir_store import read_compiled

        number = next(self.asked)
        name = f"ir-{number}.ttir"
        answer: Future = Future()
        self.answers[number] = answer
        try:
            (self.scratch / name).write_text(ir_text.replace(str(self.scratch), SCRATCH_STAND_IN))
            self.send(protocol.IRAsked(id=number, file=name, options=options))
            folder = answer.result(timeout=ASK_SECONDS)
        except Exception:  # noqa: BLE001 - not asked (a full disk, say) or no answer in time: compile it here
            self.answers.pop(number, None)
            return None
        found = read_compiled(Path(folder)) if folder else None
        if found is not None:
            with self._counting:
                self.answered += 1
        return found


def serve(scratch: Path) -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before anything initializes CUDA: the GPU is not the scout's
    yield_cpu()
    job = protocol.read_job(scratch / "job.json")
    line = EvaluatorLine(Channel(scratch / "ctl.sock"), scratch)
    board = CompileMarkers(job.compile_markers) if job.compile_markers else None
    scout = Scout(compile_threads(), board)
    target = job.triton_target
    try:
        entry = import_candidate(str(scratch / "candidate.py"), job, META)
    except BaseException:  # noqa: BLE001
        entry = None
    if entry is not None and target and scout.install(target):
        if job.ir_store:
            StoredStages(line.ask).install()
        while isinstance(command := line.next_command(), protocol.RunCase):
            scout_call(entry, command.inputs)
    compiled, failed = scout.finish()
    line.send(protocol.Scouted(compiled=compiled, failed=failed, answered=line.answered))


def main(scratch: str) -> None:
    os.chdir(scratch)
    serve(Path(scratch))
