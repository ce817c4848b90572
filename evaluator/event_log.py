"""Append-only JSON-line logs that an environment variable names (AGENTLOOP_LOCK_LOG,
AGENTLOOP_PROCESS_LOG, AGENTLOOP_CASE_LOG): off unless a benchmark asks where the time or the memory went."""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Any

VARIABLES = ("AGENTLOOP_LOCK_LOG", "AGENTLOOP_PROCESS_LOG", "AGENTLOOP_CASE_LOG")


def append(variable: str, record: dict[str, Any]) -> None:
    """One line to the file `variable` names, from any process; nothing if it names none."""
    path = os.environ.get(variable)
    if not path:
        return
    with contextlib.suppress(OSError), open(path, "a") as log:
        log.write(json.dumps(record) + "\n")


def case_event(task: str, event: str, case: int | None = None, **extra: Any) -> None:
    """One step of a case's way through an evaluation (built, sent, run in, judged; timing's steps),
    to the file AGENTLOOP_CASE_LOG names: where a task's latency went, case by case."""
    if os.environ.get("AGENTLOOP_CASE_LOG"):
        append("AGENTLOOP_CASE_LOG", {"task": task, "event": event, "case": case, "t": time.time(), **extra})
