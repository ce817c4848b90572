"""Start cost of one candidate's process: from asking the fork server for it to the process's first
word (connected: forked, confined, ready to import) and to its candidate imported (with a CUDA
context on a GPU). Run from any checkout of the project to compare its sandbox with another's.
With `--at-once N`, N processes are asked for together, `--repeat` times, spread over the GPUs of
`--device` (cuda:0,1,2,3: a fork server per GPU, each process given its own GPU's node, as
evaluations on several GPUs start them): how starting processes contends across the machine.

    python benchmarks/sandbox_start.py [--device cuda:0|cuda:0,1|cpu] [--repeat 20] [--at-once 1]
                                       [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
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
    parser.add_argument("--at-once", type=int, default=1, help="processes asked for together")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.at_once > 1:
        summary = at_once(args.device, args.at_once, args.repeat)
        print(json.dumps(summary, indent=1))
        if args.json:
            Path(args.json).write_text(json.dumps(summary, indent=1))
        return
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


def _spread(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median": round(1e3 * statistics.median(ordered)), "p90": round(1e3 * ordered[int(0.9 * (len(ordered) - 1))]),
            "max": round(1e3 * ordered[-1])}


def at_once(devices: str, count: int, rounds: int) -> dict:
    """Milliseconds from asking to spawned (the fork server's answer), connected and imported, over
    `rounds` rounds of `count` processes asked for at once."""
    from agentloop.evaluation import visible_devices
    from evaluator import gpu_node, protocol
    from evaluator.fork_server import ForkServer
    from evaluator.sandbox import Limits, Reach, Sandbox

    names = visible_devices(devices)
    servers = [ForkServer(interpret=name == "cpu", triton_stubs=Path(tempfile.mkdtemp(prefix="sandbox-start-")))
               for name in names]
    reaches = [Reach(gpu=name != "cpu", gpu_node=gpu_node.device_node(int(name[5:])) if name != "cpu" else None)
               for name in names]
    times: dict[str, list[float]] = {"spawned": [], "connected": [], "imported": []}
    failures: list[str] = []

    def one(k: int, record: bool) -> None:
        began = time.monotonic()
        slot = k % len(names)
        job = protocol.Job(task="Activation/gelu", entry="gelu", device=names[slot])
        try:
            with Sandbox(servers[slot], "candidate", job, {"candidate.py": CANDIDATE}, Limits(address_space=False),
                         reaches[slot]) as box:
                spawned = time.monotonic()
                message = box.recv(timeout=300)
                done = time.monotonic()
                if message is None or message.get("event") != "imported":
                    failures.append(f"{message} {box.output_tail()[-300:]}")
                    return
                if record:
                    times["spawned"].append(spawned - began)
                    times["connected"].append((box.connected or done) - began)
                    times["imported"].append(done - began)
        except Exception as exc:  # noqa: BLE001 - counted and shown, the round goes on
            failures.append(repr(exc)[:300])

    try:
        for round_ in range(rounds + 1):  # the first round starts the fork servers and their helpers
            threads = [threading.Thread(target=one, args=(k, round_ > 0)) for k in range(count)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        for server in servers:
            server.close()
    return {"devices": names, "at_once": count, "rounds": rounds, "failures": failures[:5],
            **{f"{name}_ms": _spread(values) for name, values in times.items() if values}}


if __name__ == "__main__":
    main()
