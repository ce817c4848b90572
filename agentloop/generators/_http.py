"""Small helpers shared by the HTTP generators (OpenAI, Anthropic); no third-party imports."""

from __future__ import annotations

import email.utils
import math
import time
from typing import Any, Mapping


def retry_after_seconds(headers: Mapping[str, str] | Any | None) -> float | None:
    """Seconds the server asked us to wait, from `retry-after-ms` (milliseconds, non-standard but
    sent by OpenAI and Anthropic) or `retry-after` (seconds, possibly fractional, or an HTTP date).
    None when absent, unparsable, negative or not finite."""
    if headers is None:
        return None
    get = getattr(headers, "get", None)
    if get is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except (TypeError, ValueError):
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
        return None
    value = get("retry-after")
    if not value:
        return None
    try:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def describe_status_error(provider: str, exc: Any) -> str:
    """'openai HTTP 400: <server message>' from an SDK APIStatusError."""
    status = getattr(exc, "status_code", "?")
    message = getattr(exc, "message", None) or str(exc)
    return f"{provider} HTTP {status}: {message}"
