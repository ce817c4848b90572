"""Run a candidate's entry a few times for ncu (started by profiler.py, never in the evaluator)."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from evaluator import candidate_source, confinement, wire
from evaluator.task import clone_inputs, on_device
from evaluator.sandboxed.candidate_process import resolve_entry


def main(scratch: str, entry: str, inputs_file: str, device: str) -> None:
    confinement.unprivileged_in_place()
    module = candidate_source.load_module(str(Path(scratch) / "candidate.py"), "candidate")
    fn = resolve_entry(module, entry, device=torch.device(device))
    inputs = on_device(wire.load(inputs_file), torch.device(device))
    for _ in range(2):
        call = clone_inputs(inputs)
        fn(*call.args, **call.kwargs)
    torch.cuda.synchronize()
    call = clone_inputs(inputs)
    torch.cuda.nvtx.range_push("profiled_call")
    fn(*call.args, **call.kwargs)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


if __name__ == "__main__":
    main(*sys.argv[1:5])
