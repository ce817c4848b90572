"""Start cost of one candidate's process: from asking the fork server for it to the process's first
word (connected: forked, confined, ready to import) and to its candidate imported (with a CUDA
context on a GPU). Run from any checkout of the project to compare its sandbox with another's.

    python benchmarks/sandbox_start.py [--device cuda:0|cpu] [--repeat 20] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CANDIDATE = '''
import triton
import triton.language as tl


@triton.jit
def nothing(x_ptr):
    pass


def gelu(input, approximate="none"):
    nothing[(1,)](input)
    return input
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json")
    args = parser.parse_args()
    from evaluator import protocol, sandbox
    from evaluator.sandbox import ChildGone, Limits, Sandbox
    try:  # this checkout, or one from before the fork server's handle and the job had modules and types
        from evaluator.fork_server import ForkServer
    except ImportError:
        ForkServer = sandbox.ForkServer

    fields = {"task": "Activation/gelu", "entry": "gelu", "device": args.device}
    job = protocol.Job(**fields) if hasattr(protocol, "Job") else {
        **fields, "mutates": [], "allowed_aten": [], "lock_dir": None, "gpu_memory_fraction": None, "model_init": None}
    stubs = Path(tempfile.mkdtemp(prefix="sandbox-start-stubs-"))
    try:  # a checkout whose fork server builds Triton's driver helper once for confined processes
        server = ForkServer(interpret=args.device == "cpu", triton_stubs=stubs)
    except TypeError:
        server = ForkServer(interpret=args.device == "cpu")
    connected, imported, isolation = [], [], None
    try:
        for k in range(args.repeat + 2):
            began = time.monotonic()
            with Sandbox(server, "candidate", job, {"candidate.py": CANDIDATE}, Limits(address_space=False)) as box:
                try:
                    message = box.recv(timeout=120)
                except ChildGone as gone:
                    raise SystemExit(f"the candidate did not start: {gone.reason}\n{gone.output_tail}") from None
                done = time.monotonic()
                if message is None or message.get("event") != "imported":
                    raise SystemExit(f"the candidate did not start: {message} {box.output_tail()}")
                if k < 2:  # the fork server's own start; the driver helper it builds once, beside it
                    time.sleep(5)
                    continue
                imported.append(done - began)
                if getattr(box, "connected", None):
                    connected.append(box.connected - began)
                isolation = getattr(box, "isolation", None)
    finally:
        server.close()
    summary = {"device": args.device, "repeat": args.repeat,
               "isolation": isolation.level if isolation else "none measured",
               "connected_ms": {"median": 1e3 * statistics.median(connected), "max": 1e3 * max(connected)}
               if connected else None,
               "imported_ms": {"median": 1e3 * statistics.median(imported), "p20": 1e3 * sorted(imported)[len(imported) // 5],
                               "max": 1e3 * max(imported)}}
    print(json.dumps(summary, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
