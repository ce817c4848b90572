"""What the candidate's process reports about a failure: the reason becomes the next prompt."""

import ast

from triton.compiler.errors import CompilationError

from evaluator.sandboxed.access_bounds import OutOfBounds
from evaluator.sandboxed.failures import classify, describe_failure

KERNEL = "def kernel(x_ptr):\n    offsets = tl.arange(0, 1000)\n"


def _refused(message, cause=None) -> CompilationError:
    node = ast.parse(KERNEL).body[0].body[0].value
    error = CompilationError(KERNEL, node, message)
    error.__cause__ = cause
    return error


def test_a_compile_error_reason_gives_the_cause_and_the_line_not_only_the_position():
    reason = describe_failure(_refused("arange's range must be a power of 2"), "COMPILE_FAIL")
    assert reason.startswith("Triton kernel failed to compile: CompilationError: arange's range must be a power of 2")
    assert "kernel line 2: `offsets = tl.arange(0, 1000)`" in reason


def test_a_compile_error_without_a_message_gives_its_cause():
    reason = describe_failure(_refused(None, ValueError("unsupported tensor index")), "COMPILE_FAIL")
    assert "unsupported tensor index" in reason and "kernel line 2" in reason


def test_other_failures_give_their_first_line():
    assert describe_failure(ValueError("bad shape\nmore detail"), "RUNTIME_FAIL") == "raised ValueError: bad shape"
    assert describe_failure(SystemExit(3), "RUNTIME_FAIL") == "called exit (3) instead of returning"


def test_an_illegal_address_is_a_memory_fail_and_ends_the_process():
    fault = RuntimeError("CUDA error: an illegal memory access was encountered\nCompile with TORCH_USE_CUDA_DSA")
    assert classify(fault) == ("MEMORY_FAIL", True)
    assert "out of bounds" in describe_failure(fault, "MEMORY_FAIL")
    assert classify(RuntimeError("CUDA error: misaligned address")) == ("MEMORY_FAIL", True)
    assert classify(RuntimeError("CUDA error: an illegal instruction was encountered")) == ("RUNTIME_FAIL", True)


def test_an_interpreted_out_of_bounds_access_is_a_memory_fail_however_it_is_wrapped():
    refused = OutOfBounds("kernel `k` read out of bounds at line 3")
    wrapped = RuntimeError("InterpreterError('...')")
    wrapped.__cause__ = refused
    assert classify(wrapped) == ("MEMORY_FAIL", False)
    assert describe_failure(refused, "MEMORY_FAIL") == "kernel `k` read out of bounds at line 3"
