"""The candidate under Compute Sanitizer (memcheck.py): it imports the candidate, then for each case
the evaluator sends, one call on the case's inputs, synchronized.

Started by compute-sanitizer inside the confined process the fork server made (it inherits the
namespaces, the unprivileged user, the seccomp filter and the limits), never in the evaluator.
Nothing is judged here: the outputs were judged already, and what counts is what the sanitizer saw.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import torch

from evaluator import cuda_waits, gpu_lock, gpu_node, protocol, triton_cache, wire
from evaluator.compile_markers import CompileMarkers
from evaluator.sandboxed.candidate_process import device_set_up, import_candidate
from evaluator.sandboxed.channel import Channel
from evaluator.sandboxed.failures import classify, describe_failure, trimmed_traceback
from evaluator.sandboxed.guards import LaunchRecorder
from evaluator.task import clone_inputs, on_device


def main(scratch: str) -> None:
    os.chdir(scratch)
    if os.environ.get(triton_cache.KEY_VARIABLE):
        triton_cache.reuse_key(os.environ[triton_cache.KEY_VARIABLE])
    job = protocol.read_job(Path("job.json"))
    channel = Channel(Path(scratch) / "ctl.sock")
    channel.report_lock_waits()
    device = gpu_node.own_device(job.device)
    path = str(Path(scratch) / "candidate.py")
    lock_dir = job.lock_dir
    recorder = LaunchRecorder(lock_dir=lock_dir, lock_what="memcheck case")
    if job.compile_markers:
        recorder.wait_for_scout(CompileMarkers(job.compile_markers))
    recorder.install()

    def fail(phase: str, exc: BaseException, case: int | None = None) -> None:
        verdict = classify(exc)[0]
        channel.send(protocol.encode(protocol.Failed(
            phase=phase, verdict=verdict, reason=describe_failure(exc, verdict)[:protocol.MAX_TEXT],
            traceback=trimmed_traceback(exc, path)[-protocol.MAX_TEXT:], case=case,
            out_of_gpu_memory=isinstance(exc, torch.OutOfMemoryError))))

    try:
        # Compute Sanitizer sets itself up on the GPU with the context: not during another's timing.
        with gpu_lock.shared(lock_dir, "memcheck start"):
            if not device_set_up(lambda: _use_device(device), channel, lambda exc: fail("device", exc)):
                return
            entry = import_candidate(path, job, device)
    except BaseException as exc:  # noqa: BLE001 - untrusted code
        fail("import", exc)
        return
    channel.send(protocol.encode(protocol.Imported(memory_check="memcheck")))
    while isinstance(command := protocol.parse_command(channel.recv()), protocol.RunCase):
        try:
            run_case(entry, command.inputs, device, recorder)
        except BaseException as exc:  # noqa: BLE001
            fail("call", exc, command.index)
            return
        channel.send(protocol.encode(protocol.MemoryChecked(case=command.index)))
    # The process's teardown (its CUDA context, under Compute Sanitizer) is GPU work too. Python's own
    # (freeing every object, under instrumentation) is skipped: the report is complete already.
    gpu_lock.shared_until_exit(lock_dir)
    sys.stdout.flush()
    os._exit(0)


def _use_device(device: torch.device) -> None:
    """The device and its context (under Compute Sanitizer, the sanitizer's set-up on it too)."""
    if device.type == "cuda":
        cuda_waits.wait_by(device, cuda_waits.SCHED_BLOCKING_SYNC)  # never timed
        torch.cuda.set_device(device)
        torch.cuda.init()


def run_case(entry, inputs_file: str, device: torch.device, recorder: LaunchRecorder) -> None:
    """One call, synchronized, its tensors freed, under the GPU lock held shared: under Compute
    Sanitizer even a copy or a free is slow instrumented work, which must not overlap another
    candidate's timing. Compiling a kernel and loading its module (which the sanitizer instruments
    as it loads) are the process's own CPU work: the recorder lets the lock go for them, and waits
    for the compile scout rather than compiling the same kernel beside it."""
    host_inputs = wire.load(inputs_file)
    recorder.locking = True
    recorder.acquire()
    try:
        call = clone_inputs(on_device(host_inputs, device))
        entry(*call.args, **call.kwargs)
        del call
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    finally:
        recorder.locking = False
        recorder.release()


if __name__ == "__main__":
    main(sys.argv[1])
