"""structlog set-up: readable lines on a terminal, JSON lines otherwise, always on stderr."""

from __future__ import annotations

import logging
import sys

import structlog

from traces.untrusted_text import plain


class _StderrLogger:
    """Looks sys.stderr up on every line, so a live progress display can redirect it."""

    def msg(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    log = debug = info = warning = warn = error = critical = exception = msg


def _inert(logger, method: str, event: dict) -> dict:
    """Values can hold text a model, a server or a candidate wrote: no control character of theirs
    reaches the terminal (the readable renderer prints strings as they are)."""
    return {key: plain(value) if isinstance(value, str) else value for key, value in event.items()}


def configure(json_lines: bool | None = None, level: str = "info") -> None:
    if json_lines is None:
        json_lines = not sys.stderr.isatty()
    renderer = structlog.processors.JSONRenderer() if json_lines else structlog.dev.ConsoleRenderer(colors=True)
    structlog.configure(
        processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso"), _inert, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=lambda *args: _StderrLogger(),
        cache_logger_on_first_use=False,
    )
