"""A sandboxed process's end of its Unix socket to the evaluator: one JSON message per line."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from evaluator import gpu_lock, protocol


class Channel:
    def __init__(self, path: Path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(str(path))
        self.reader = self.sock.makefile("rb")

    def send(self, message: dict[str, Any]) -> None:
        self.sock.sendall(json.dumps(message).encode() + b"\n")

    def report_lock_waits(self) -> None:
        gpu_lock.report_waits(
            lambda waiting: self.send(protocol.encode(protocol.LockWaiting() if waiting else protocol.LockHeld())))

    def recv(self) -> dict[str, Any]:
        line = self.reader.readline()
        if not line:
            raise EOFError("evaluator closed the channel")
        return json.loads(line)
