"""Reading a candidate process's messages in tests that drive a Sandbox by hand."""

from evaluator.sandbox import Sandbox


def after_device_ready(box: Sandbox, timeout: float = 60) -> dict:
    """The message after the one saying the device is set up (sent before the module runs)."""
    ready = box.recv(timeout=timeout)
    assert ready["event"] == "device_ready", ready
    return box.recv(timeout=timeout)
