"""The candidate's process: import it, call it on each case, time it when asked.

Runs in a child forked by the fork server, with a scratch directory as its working directory.
It reports through a Unix socket to the evaluator and writes outputs as wire files; it never
sees the reference implementation or the expected values, and it judges nothing itself.
"""

from __future__ import annotations

import contextlib
import gc
import os
import time
from pathlib import Path
from typing import Any, Callable

import torch

from evaluator import candidate_source, cuda_waits, event_log, gpu_lock, gpu_node, protocol, wire
from evaluator.compile_markers import CompileMarkers
from evaluator.contracts import same_bits
from evaluator.sandboxed import access_bounds, interpreted_autotune
from evaluator.sandboxed.channel import Channel
from evaluator.sandboxed.failures import classify, describe_failure, trimmed_traceback
from evaluator.sandboxed.guards import LaunchRecorder, TorchGuard, live_threads, poison_value
from evaluator.task import Inputs, clone_inputs, judged_outputs, map_tensors, on_device, pinned_copy, tensors_in
from evaluator.timing import TimingPolicy, WarmUp, measure, time_once

CANDIDATE_MODULE = "candidate"
HOST = torch.device("cpu")
PINNED_MIN_BYTES = 1 << 20  # smaller outputs are copied as they are


class CandidateProcess:
    def __init__(self, scratch: Path):
        self.scratch = scratch
        self.job = protocol.read_job(scratch / "job.json")
        self.channel = Channel(scratch / "ctl.sock")
        self.channel.report_lock_waits()
        self.device = gpu_node.own_device(self.job.device)
        self.candidate_path = str(scratch / "candidate.py")
        self.recorder = LaunchRecorder(lock_dir=self.job.lock_dir)
        if self.job.compile_markers:
            self.recorder.wait_for_scout(CompileMarkers(self.job.compile_markers))
        self.extra_allowed = frozenset(self.job.allowed_aten)
        self.denied = frozenset(self.job.denied_aten)
        self.mutates = self.job.mutates
        self.entry: Callable | None = None

    def fail(self, phase: str, exc: BaseException, verdict: str | None = None, **extra) -> None:
        verdict = verdict or classify(exc)[0]
        self.channel.send(protocol.encode(protocol.Failed(
            phase=phase, verdict=verdict, reason=describe_failure(exc, verdict)[:protocol.MAX_TEXT],
            traceback=trimmed_traceback(exc, self.candidate_path)[-protocol.MAX_TEXT:],
            out_of_gpu_memory=isinstance(exc, torch.OutOfMemoryError), **extra)))

    def start(self) -> bool:
        torch.seed()  # forked from one server, every candidate would otherwise draw the same "fresh" seeds
        self.recorder.install()
        memory_check = ""
        if self.device.type == "cpu":
            interpreted_autotune.one_config()
            memory_check = access_bounds.install(self.candidate_path) if self.job.check_memory else ""
        try:
            # Creating the GPU context and running the module may launch work: not during a timing.
            with gpu_lock.shared(self.job.lock_dir, "start"):
                if not device_set_up(lambda: use_device(self.device, self.job.gpu_memory_fraction), self.channel,
                                     lambda exc: self.fail("device", exc, verdict="RUNTIME_FAIL")):
                    return False
                self.entry = import_candidate(self.candidate_path, self.job, self.device)
        except BaseException as exc:  # noqa: BLE001 - any failure of untrusted code is a verdict
            self.fail("import", exc, verdict="COMPILE_FAIL" if not isinstance(exc, SystemExit) else "RUNTIME_FAIL")
            return False
        self.channel.send(protocol.encode(protocol.Imported(memory_check=memory_check)))
        return True

    def sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def call_once(self, inputs: Inputs, run: int, guard_run: int | None) -> tuple[Any, Inputs, dict]:
        """One guarded call on a fresh copy of `inputs` (which stay pristine for the mutation check)."""
        call_inputs = clone_inputs(inputs)
        self.sync()
        threads_before = live_threads()
        launches_before = self.recorder.launches
        guard = TorchGuard(self.recorder, self.extra_allowed, run=guard_run, denied=self.denied)
        began = time.perf_counter()
        self.recorder.locking = True
        try:
            with guard:
                returned = self.entry(*call_inputs.args, **call_inputs.kwargs)
                wire.require_plain(returned)  # before anything touches it
            self.sync()
        finally:
            self.recorder.locking = False
        refused = access_bounds.take()  # also when the candidate caught the error
        if refused:
            raise access_bounds.OutOfBounds(refused)
        report = {
            "launches": self.recorder.launches - launches_before,
            "violations": tuple(guard.violations),
            "new_threads": len(live_threads() - threads_before),
            "mutated": tuple(changed_arguments(inputs, call_inputs, self.mutates)),
            "seconds": time.perf_counter() - began,
        }
        return returned, call_inputs, report

    def next_case(self) -> tuple[int, str] | None:
        """The evaluator streams cases as their inputs are ready: (index, inputs file), None at the end."""
        command = protocol.parse_command(self.channel.recv())
        if isinstance(command, protocol.RunCase):
            return command.index, command.inputs
        return None

    def run_cases(self) -> bool:
        while (case := self.next_case()) is not None:
            if not self.run_case(*case):
                return False
            if self.device.type == "cuda":
                torch.cuda.empty_cache()  # the case's tensors are gone; other candidates share this GPU
        self.channel.send(protocol.encode(protocol.CasesDone(
            kernels=tuple(vars(k) for k in self.recorder.kernels.values()),
            compile_seconds=self.recorder.compile_seconds, scout_wait_seconds=self.recorder.scout_wait_seconds,
            launchers=tuple(sorted(self.recorder.launchers)))))
        log_gpu_memory("correctness", self.device)
        return True

    def run_case(self, index: int, inputs_file: str) -> bool:
        """Two guarded calls on the case's inputs, their outputs written for the evaluator."""
        try:
            inputs = on_device(wire.load(inputs_file), self.device)
        except BaseException as exc:  # noqa: BLE001 - a full GPU, say: a verdict, not a dead child
            self.fail("call", exc, verdict=classify(exc)[0], case=index, run=0)
            return False
        for run in range(2):
            try:
                # The GPU lock, taken at the call's first launch, also covers the checks and the copy
                # of the outputs to the host, so none of this traffic overlaps another candidate's timing.
                returned, call_inputs, report = self.call_once(inputs, run, guard_run=run)
                outputs = to_host(judged_outputs(self.mutates, returned, call_inputs))
                self.recorder.release()  # writing the file below is the host's work alone
                out_path = self.scratch / f"case{index}_run{run}.pt"
                wire.save({"out": outputs}, out_path)
            except wire.WireError as exc:
                self.fail("call", exc, verdict="CONTRACT_FAIL", case=index, run=run)
                return False
            except BaseException as exc:  # noqa: BLE001
                verdict, fatal = classify(exc)
                self.fail("call", exc, verdict=verdict, case=index, run=run, fatal=fatal)
                return False
            self.channel.send(protocol.encode(protocol.CallDone(case=index, run=run, file=str(out_path), **report)))
        return True

    def time_candidate(self, command: protocol.TimeCalls) -> None:
        sets = [on_device(wire.load(path), self.device) for path in command.sets]
        probes = [on_device(wire.load(path), self.device) for path in command.probes]
        policy = TimingPolicy(**command.policy)
        gc.collect()  # here, not under the hold: with torch imported a full collection takes 0.1 s
        with cuda_waits.spinning(self.device), gpu_lock.exclusive(self.job.lock_dir, "timing"):
            result = time_function(self.entry, sets, self.mutates, self.recorder, self.extra_allowed, policy,
                                   self.device, probes=probes, denied=self.denied)
        kept = result.pop("kept")
        # off the GPU before the next candidate is timed
        with gpu_lock.shared(self.job.lock_dir, "timed outputs to the host"):
            kept = {k: to_host(v) for k, v in kept.items()}
        for k, value in kept.items():
            wire.save({"out": value}, self.scratch / f"timed_set{k}.pt")
        self.channel.send(protocol.encode(protocol.Timed(**result)))
        log_gpu_memory("timing", self.device)


def to_host(value: Any) -> Any:
    """Outputs copied to the host for the evaluator, large tensors through page-locked memory, since
    these copies hold the GPU lock shared: 256 MiB took 143-158 ms pageable and 5 ms page-locked on
    an H100 host (91 ms the first time; torch keeps freed page-locked blocks for the next outputs)."""
    def copy(t: torch.Tensor) -> torch.Tensor:
        large = t.layout == torch.strided and t.numel() * t.element_size() >= PINNED_MIN_BYTES
        return pinned_copy(t) if t.device.type == "cuda" and large else t.to(HOST)
    return map_tensors(value, copy)


def device_set_up(set_up: Callable[[], None], channel: Channel, fail: Callable[[BaseException], None]) -> bool:
    """`set_up()`, the process's device, before any candidate code runs: a failure here is the
    machine's, said through `fail`; success is said (`device_ready`) before the module is imported."""
    try:
        set_up()
    except BaseException as exc:  # noqa: BLE001 - no candidate code has run in this process yet
        fail(exc)
        return False
    channel.send(protocol.encode(protocol.DeviceReady()))
    return True


def use_device(device: torch.device, memory_fraction: float | None) -> None:
    if device.type == "cuda":
        cuda_waits.sleep_in_waits(device)
        torch.cuda.set_device(device)
        if memory_fraction:
            torch.cuda.set_per_process_memory_fraction(float(memory_fraction), device)


def import_candidate(path: str, job: protocol.Job, device: torch.device) -> Callable:
    """Runs the candidate's module; its entry function."""
    module = candidate_source.load_module(path, CANDIDATE_MODULE)
    return resolve_entry(module, job.entry, job.model_init, device)


def log_gpu_memory(stage: str, device: torch.device) -> None:
    """For benchmarks (AGENTLOOP_PROCESS_LOG): the most GPU memory torch held in this process so far."""
    if device.type == "cuda" and os.environ.get("AGENTLOOP_PROCESS_LOG"):
        event_log.append("AGENTLOOP_PROCESS_LOG", {
            "pid": os.getpid(), "stage": stage, "allocated_mib": torch.cuda.max_memory_allocated(device) >> 20,
            "reserved_mib": torch.cuda.max_memory_reserved(device) >> 20})


def changed_arguments(before: Inputs, after: Inputs, mutates: tuple[int, ...]) -> list[str]:
    """Arguments whose bits changed although the task's semantics leave them alone."""
    changed = []
    named = [(f"argument {i}", a, b) for i, (a, b) in enumerate(zip(before.args, after.args)) if i not in mutates]
    named += [(f"argument {k!r}", v, after.kwargs.get(k)) for k, v in before.kwargs.items()]
    for name, a, b in named:
        pairs = zip(tensors_in(a), tensors_in(b))
        if not all(same_bits(x, y) for x, y in pairs):
            changed.append(name)
    return changed


def resolve_entry(module, entry: str, model_init: str | None = None, device: torch.device | None = None) -> Callable:
    """The function to call. For KernelBench problems, ModelNew built as the problem's Model is:
    under the same seed, with the same constructor arguments."""
    if entry == "ModelNew.forward":
        if model_init is None:
            raise AttributeError("this task takes a function, not a ModelNew class")
        from evaluator.kernelbench_formats import MODEL_SEED
        torch.manual_seed(MODEL_SEED)
        model = module.ModelNew(*wire.load(model_init).args).to(device or "cpu")

        def forward(*args, **kwargs):
            with torch.no_grad():
                return model(*args, **kwargs)
        return forward
    fn = getattr(module, entry, None)
    if not callable(fn):
        raise AttributeError(f"the module defines no callable `{entry}`")
    return fn


def time_function(fn: Callable, sets: list[Inputs], mutates: tuple[int, ...], recorder: LaunchRecorder | None,
                  extra_allowed: frozenset[str], policy: TimingPolicy,
                  device: torch.device, keep_outputs: bool = True, probes: list[Inputs] = (),
                  denied: frozenset[str] = frozenset(), returns_checked: bool = True,
                  warmed: WarmUp | None = None) -> dict[str, Any]:
    """Time `fn` rotating through input sets copied into fixed working buffers, then once on each
    of `probes` (inputs never seen before, same configuration) in the same buffers.

    The judged outputs of the last repetition of each set come back under "kept" (by set index,
    the probes' after the sets'), for the evaluator to check, so a kernel that replays or caches
    results across timed calls is caught; "probe_ms" times the probe calls, which nothing can have
    cached, for the evaluator to compare with the rotation's median. What `fn` returns must be plain
    (wire.require_plain) unless `returns_checked` is off, for trusted code alone: a reference may return
    torch.linalg's named tuples. `warmed`: see `timing.measure`.
    """
    work = clone_inputs(sets[0])
    flush = torch.empty(_l2_flush_bytes(device), dtype=torch.uint8, device=device)
    returned: dict[str, Any] = {}
    kept: dict[int, Any] = {}
    calls_without_launch = 0
    violations: list[str] = []
    check = wire.require_plain if returns_checked else (lambda value: None)

    def prepare(k: int) -> None:
        prepare_probe(sets[k])

    def prepare_probe(inputs: Inputs) -> None:
        for dst, src in zip(tensors_in(work), tensors_in(inputs)):
            dst.copy_(src)
        flush.zero_()

    def call(guarded: bool) -> None:
        nonlocal calls_without_launch
        before = recorder.launches if recorder else 0
        if guarded and recorder is not None:
            guard = TorchGuard(recorder, extra_allowed, run=None, denied=denied)
            with guard:
                returned["value"] = fn(*work.args, **work.kwargs)
                check(returned["value"])
            violations.extend(v for v in guard.violations if v not in violations)
        else:
            returned["value"] = fn(*work.args, **work.kwargs)
            check(returned["value"])
        if recorder is not None and recorder.launches == before:
            calls_without_launch += 1

    def keep(k: int) -> None:
        if keep_outputs:
            kept[k] = map_tensors(judged_outputs(mutates, returned["value"], work), _detached_copy)
        for tensor in tensors_in(returned.pop("value")):
            tensor.fill_(poison_value(tensor.dtype, 0))  # stale results cannot serve a later call

    if recorder is not None:
        recorder.streams.clear()
        recorder.track_streams = True
    try:
        measurement = measure(call, prepare, len(sets), policy, after=keep, warmed=warmed)
        probed = []
        for k, probe in enumerate(probes):  # each once, on inputs never seen before
            with _collector_paused():  # one sample: a collection pause would be all of it
                probed.append(time_once(call, lambda: prepare_probe(probe), measurement.spin))
            keep(len(sets) + k)
    finally:
        if recorder is not None:
            recorder.track_streams = False
    foreign = recorder.streams - {torch.cuda.current_stream(device).cuda_stream} if recorder else set()
    side_stream = bool(foreign) or measurement.escaped_stream(policy)
    samples = measurement.walls_ms if side_stream else measurement.events_ms
    return {"samples_ms": samples, "side_stream": side_stream, "probe_ms": [p[side_stream] for p in probed],
            "calls_without_launch": calls_without_launch, "violations": violations, "kept": kept}



@contextlib.contextmanager
def _collector_paused():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _detached_copy(t: torch.Tensor) -> torch.Tensor:
    return t.detach().clone()


def _l2_flush_bytes(device: torch.device) -> int:
    l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 64 << 20)
    return max(2 * l2, 64 << 20)


def serve(scratch: Path) -> None:
    """Entry point in the forked child."""
    process = CandidateProcess(scratch)
    if not process.start() or not process.run_cases():
        return
    while True:
        try:
            command = process.channel.recv()
        except EOFError:
            return
        command = protocol.parse_command(command)
        if isinstance(command, protocol.TimeCalls):
            try:
                process.time_candidate(command)
            except BaseException as exc:  # noqa: BLE001
                verdict, fatal = classify(exc)
                process.fail("timing", exc, verdict=verdict, fatal=fatal)
                return
        else:
            return


def main(scratch: str) -> None:
    os.chdir(scratch)
    serve(Path(scratch))
