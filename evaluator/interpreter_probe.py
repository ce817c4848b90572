"""Which dtypes this machine's Triton interpreter computes correctly, found once per set of versions.

Triton's CPU interpreter has computed some dtypes wrongly (3.9 gets bfloat16 arithmetic wrong:
`x * 0.5`, `x + x`, `-x`, `tl.maximum`, `tl.where`; 3.6 cannot run bfloat16 constants at all). A
correct kernel would then be INCORRECT on those cases, and a wrong one could pass; neither verdict
would mean anything. So before the first CPU evaluation, small kernels of each operation run under
the interpreter on every float dtype and are compared with PyTorch; the dtypes that fail are not
run, and each result says which were not checked and why. The probe runs in a child process, where
the interpreter is switched on by the environment: a child of the evaluator's fork server, which has
torch and Triton imported already, or else a fresh interpreter. Its answer is kept in the evaluator's
cache folder under the versions it depends on.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evaluator.fork_server import ForkServer

DTYPES = ("float16", "bfloat16", "float32")
OPERATIONS = ("x * 0.5", "x + x", "-x", "tl.maximum(x, 0.0)", "tl.where(x > 0, x, 0.0)", "tl.dot")
PROBE_SECONDS = 300


def unreliable(cache_dir: Path | None, server: ForkServer | None = None) -> dict[str, str]:
    """dtype name -> why the interpreter cannot judge it (empty where it computes every dtype right).
    `server`: a fork server of the interpreter's (TRITON_INTERPRET=1) that runs the probe, if any."""
    cached = cache_file(cache_dir)
    if cached is not None and cached.is_file():
        try:
            return dict(json.loads(cached.read_text()))
        except (ValueError, TypeError):
            pass
    found = _probe(server)
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            temporary = cached.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps(found))
            temporary.replace(cached)
        except OSError:  # a read-only cache: probed again next time
            pass
    return found


def _versions() -> str:
    from importlib.metadata import version

    return "-".join(f"{name}{version(name)}" for name in ("triton", "torch", "numpy"))


def cache_file(cache_dir: Path | None) -> Path | None:
    return None if cache_dir is None else Path(cache_dir) / "interpreter" / f"probe-{_versions()}.json"


def _run_probe() -> dict[str, str]:
    env = dict(os.environ, TRITON_INTERPRET="1")
    done = subprocess.run([sys.executable, "-m", "evaluator.interpreter_probe"], capture_output=True, text=True,
                          env=env, timeout=PROBE_SECONDS, cwd=Path(__file__).resolve().parent.parent)
    if done.returncode != 0:
        raise RuntimeError(f"the interpreter probe failed: {done.stderr.strip()[-800:]}")
    return _answer(done.stdout)


def _probe(server: ForkServer | None) -> dict[str, str]:
    """In a child of `server`, or in a fresh interpreter where there is none or it cannot start
    (that failure is the first evaluation's to report)."""
    from evaluator.fork_server import ForkServerError

    if server is not None:
        try:
            return _run_probe_forked(server)
        except ForkServerError:
            pass
    return _run_probe()


def _run_probe_forked(server: ForkServer) -> dict[str, str]:
    """The probe in a child of `server` (unconfined: it runs the project's kernels, no candidate's)."""
    scratch = Path(tempfile.mkdtemp(prefix="agentloop-probe-"))
    try:
        pid = server.spawn("interpreter_probe", scratch, {"CORE": 0, "CPU": PROBE_SECONDS, "NOFILE": 256})
        exited = server.wait_exit(pid, PROBE_SECONDS)
        server.forget(pid)
        output = (scratch / "output.txt").read_text(errors="replace") if (scratch / "output.txt").is_file() else ""
        if exited is None:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            raise RuntimeError(f"the interpreter probe did not finish in {PROBE_SECONDS} s")
        if exited.code != 0:
            raise RuntimeError(f"the interpreter probe failed ({exited.describe('its process')}): {output[-800:]}")
        return _answer(output)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _answer(output: str) -> dict[str, str]:
    """The probe's answer: the last line it printed."""
    return dict(json.loads(output.strip().splitlines()[-1]))


def main() -> None:
    """In the child, with TRITON_INTERPRET=1: prints {dtype: why} for the dtypes computed wrongly."""
    import torch
    import triton

    wrong = {}
    for name in DTYPES:
        failures = [failed for op in OPERATIONS if (failed := _failure(op, getattr(torch, name)))]
        if failures:
            wrong[name] = (f"this Triton's CPU interpreter ({triton.__version__}) computes {name} wrongly "
                           f"({', '.join(failures)}), so its {name} cases cannot be judged on the CPU")
    print(json.dumps(wrong))


def _failure(operation: str, dtype) -> str:
    """'' where the interpreter computes `operation` on `dtype` right, else the operation and, where
    the interpreter could not run it at all (3.6's has no bfloat16 constants), its error."""
    try:
        return "" if _computes(operation, dtype) else operation
    except Exception as error:  # noqa: BLE001 - any failure of the interpreter counts as computing it wrongly
        return f"{operation} fails: {type(error).__name__}: {str(error)[:120]}"


def _computes(operation: str, dtype) -> bool:
    import torch

    from evaluator import interpreter_kernels as kernels

    gen = torch.Generator().manual_seed(0)
    if operation == "tl.dot":
        a, b = (torch.randn(16, 16, generator=gen).to(dtype) for _ in range(2))
        out = torch.empty(16, 16, dtype=torch.float32)
        kernels.dot[(1,)](a, b, out, N=16)
        expected = a.float() @ b.float()
        return bool(torch.allclose(out, expected, rtol=2e-2, atol=2e-2))
    x = torch.randn(64, generator=gen).to(dtype)
    y = torch.empty_like(x)
    kernels.elementwise[(1,)](x, y, 64, OP=OPERATIONS.index(operation), BLOCK=64)
    expected = [x * 0.5, x + x, -x, torch.clamp_min(x, 0), torch.where(x > 0, x, torch.zeros_like(x))]
    return bool(torch.equal(y, expected[OPERATIONS.index(operation)]))


if __name__ == "__main__":
    main()
