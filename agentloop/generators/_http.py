"""Small helpers shared by the HTTP generators (OpenAI, Anthropic); no third-party imports."""

from __future__ import annotations

import email.utils
import math
import time
from typing import Any, Mapping


# Headers that give the wait as a number, and what that number is divided by to make seconds.
NUMERIC_RETRY_AFTER = (("retry-after-ms", 1000.0), ("retry-after", 1.0))


def retry_after_seconds(headers: Mapping[str, str] | Any | None) -> float | None:
    """Seconds the server asked us to wait, from `retry-after-ms` (milliseconds, non-standard but
    sent by OpenAI and Anthropic) or `retry-after` (seconds, possibly fractional, or an HTTP date).
    None when absent, unparsable, negative or not finite."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    for name, divisor in NUMERIC_RETRY_AFTER:
        seconds = _as_number(get(name))
        if seconds is not None:
            seconds /= divisor
            return seconds if math.isfinite(seconds) and seconds >= 0 else None
    return _seconds_until(get("retry-after"))


def _as_number(value: Any) -> float | None:
    """`value` as a float; None when absent or not a number."""
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _seconds_until(http_date: Any) -> float | None:
    """Seconds from now until an HTTP date (none when past); None when absent or unparsable."""
    if not http_date:
        return None
    try:
        parsed = email.utils.parsedate_tz(http_date)
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
