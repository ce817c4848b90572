"""Append-only JSON-line logs that an environment variable names (AGENTLOOP_LOCK_LOG,
AGENTLOOP_PROCESS_LOG): off unless a benchmark asks where the time or the memory went."""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any


def append(variable: str, record: dict[str, Any]) -> None:
    """One line to the file `variable` names, from any process; nothing if it names none."""
    path = os.environ.get(variable)
    if not path:
        return
    with contextlib.suppress(OSError), open(path, "a") as log:
        log.write(json.dumps(record) + "\n")
