"""A throwaway child that compiles one Triton IR (evaluator/ir_store.py): it runs no candidate code,
but the IR came from a candidate's process, so it is confined like one, without the GPU. It reads
`request.json` (the IR text, the launch options, the target) from its scratch folder and writes
each stage's output and the metadata under `compiled/`; the evaluator reads them once it has
exited and stores them under the key it computed itself."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from evaluator.ir_store import OWN_METADATA, STAGES, Compiled

IR_FILE = "kernel.ttir"


def compile_ir(ir_text: str, options: dict[str, Any], target: dict[str, Any], folder: Path) -> Compiled:
    """The backend's stages after the Triton IR, run on `ir_text` (Triton's compile from an IR file),
    with Triton's cache in `folder`."""
    os.environ["TRITON_CACHE_DIR"] = str(folder / "cache")
    os.environ.pop("TRITON_CACHE_MANAGER", None)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.runtime.driver import driver

    from evaluator.compile_scout import CompileOnlyDriver

    gpu = GPUTarget(target["backend"], target["arch"], target["warp_size"])
    driver.set_active(CompileOnlyDriver(gpu))
    path = folder / IR_FILE
    path.write_text(ir_text)
    kernel = triton.compile(str(path), target=gpu, options=dict(options))
    stages = {stage: _bytes(kernel.asm[stage]) for stage in STAGES}
    metadata = {k: v for k, v in kernel.metadata._asdict().items() if k not in OWN_METADATA}
    return Compiled(stages, json.loads(json.dumps(metadata, default=list)))


def _bytes(output: Any) -> bytes:
    return output if isinstance(output, bytes) else str(output).encode()


def write(compiled: Compiled, folder: Path) -> None:
    folder.mkdir()
    for stage, content in compiled.stages.items():
        (folder / stage).write_bytes(content)
    (folder / "metadata.json").write_text(json.dumps(compiled.metadata))


def main(scratch: str) -> None:
    from evaluator import protocol
    from evaluator.compile_scout import yield_cpu
    from evaluator.sandboxed.channel import Channel

    yield_cpu()  # compiling for later evaluations comes after this one's work
    os.chdir(scratch)
    channel = Channel(Path(scratch) / "ctl.sock")
    request = json.loads(Path("request.json").read_text())
    write(compile_ir(request["ir"], request["options"], request["target"], Path(scratch)), Path(scratch) / "compiled")
    channel.send(protocol.encode(protocol.IRCompiled()))
