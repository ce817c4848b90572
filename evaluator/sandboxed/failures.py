"""What a sandboxed process tells the evaluator of an exception its code raised: the verdict it
means, whether the process is still usable, and a line a model can act on."""

from __future__ import annotations

import traceback
from typing import Any, Callable

import torch

from evaluator.sandboxed import access_bounds


def trimmed_traceback(exc: BaseException, candidate_path: str) -> str:
    """The frames in the candidate's own file, then the exception line."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == candidate_path]
    lines = [f"  line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in frames]
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return "\n".join(lines + [message])


def classify(exc: BaseException) -> tuple[str, bool]:
    """(verdict, fatal) for an exception raised by candidate code. Fatal: the process is unusable."""
    name = type(exc).__name__
    module = type(exc).__module__ or ""
    text = str(exc)
    if access_bounds.caused(exc):
        return "MEMORY_FAIL", False
    if name in ("CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct") or (
            module.startswith("triton.compiler")):
        return "COMPILE_FAIL", False
    if name == "InterpreterError":
        return "COMPILE_FAIL", False
    if "illegal memory access" in text or "misaligned address" in text:
        return "MEMORY_FAIL", True
    if "CUDA error" in text or name == "AcceleratorError":
        return "RUNTIME_FAIL", True
    return "RUNTIME_FAIL", False


def _compile_error(exc: BaseException) -> str:
    """Where and why Triton's code generator refused a kernel: its message puts the source excerpt
    first and the cause last, so the first line alone says only "at 2:40:"."""
    node, src = getattr(exc, "node", None), getattr(exc, "src", None)
    cause = getattr(exc, "error_message", None) or (str(exc.__cause__) if exc.__cause__ else "")
    if not cause or not hasattr(node, "lineno"):
        return ""
    lines = (src or "").split("\n")
    code = lines[node.lineno - 1].strip() if 0 < node.lineno <= len(lines) else ""
    return f"{' '.join(cause.split())[:400]} (kernel line {node.lineno}: `{code[:160]}`)"


PROCESS_FAILURES: dict[type, Callable[[Any], str]] = {
    torch.OutOfMemoryError: lambda exc: "ran out of GPU memory: " + str(exc).splitlines()[0],
    MemoryError: lambda exc: "ran out of host memory",
    SystemExit: lambda exc: f"called exit ({exc.code!r}) instead of returning",
}


def describe_failure(exc: BaseException, verdict: str) -> str:
    """What went wrong, in a line a model can act on."""
    for kind, describe in PROCESS_FAILURES.items():
        if isinstance(exc, kind):
            return describe(exc)
    first = (str(exc).strip().splitlines() or [""])[0]
    if verdict == "MEMORY_FAIL":
        return _memory_failure(exc, first)
    if verdict == "COMPILE_FAIL":
        return f"Triton kernel failed to compile: {type(exc).__name__}: {_compile_error(exc) or first}"
    if "CUDA error" in str(exc) or "illegal memory access" in str(exc):
        return f"CUDA fault: {first} (out-of-bounds access? check masks and offsets)"
    return f"raised {type(exc).__name__}: {first}"


def _memory_failure(exc: BaseException, first: str) -> str:
    """An out-of-bounds access: the interpreter's record of it, or the CUDA fault it caused."""
    if not access_bounds.caused(exc):
        return f"CUDA fault: {first} (a kernel accessed memory out of bounds or misaligned; check masks and offsets)"
    return str(exc) if isinstance(exc, access_bounds.OutOfBounds) else access_bounds.take() or first
