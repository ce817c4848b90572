"""Concurrency limit and retries around any Generator.

`Resilient(inner, spec)` is itself a Generator. Per call it:

* holds one slot of an `asyncio.Semaphore(spec.max_concurrency)` for the whole call, retry waits
  included: a call backing off after a 429 keeps its slot, so queued calls do not pile onto a
  server that just said "slow down";
* retries by exception class, with tenacity:
  - `RateLimited`: waits `retry_after` when the server gave one (capped at spec.retry_max_delay_s),
    otherwise exponential backoff with jitter;
  - `Transient`: exponential backoff with jitter: retry_base_delay_s * 2**(n-1) plus a random
    0..retry_base_delay_s, capped at spec.retry_max_delay_s;
  - `Fatal` and any other exception (and cancellation): raised at once, no retry;
* makes at most `spec.max_retries` attempts in total (at least one). When they are used up it
  raises an error of the last error's class whose message says how many attempts were made and
  what the last failure was; the last error is its `__cause__`, and `.attempts` holds the count;
* sets `Response.attempts` (tries made) and `Response.latency_s` (from the first try's start to the
  answer, retry waits included; time queued for the semaphore is not included but is reported as
  `Response.extra["queue_s"]`).

The semaphore binds to the event loop of its first contended use: use one Resilient per loop.

Every retry is logged on the structlog logger "agentloop.generators" as event "generator_retry" with
provider, model, attempt, wait and reason; giving up is logged as "generator_gave_up".
"""

from __future__ import annotations

import asyncio
import dataclasses
import time

import structlog
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    RetryError,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from .base import Fatal, Generator, GeneratorError, GeneratorSpec, RateLimited, Request, Response, Transient

log = structlog.get_logger("agentloop.generators")

RETRYABLE = (RateLimited, Transient)


def _reason(exc: BaseException | None) -> str:
    if exc is None:
        return ""
    text = str(exc) or repr(exc)
    return f"{type(exc).__name__}: {text}"


class Resilient:
    """Semaphore plus classified retries around `inner`; see the module docstring."""

    def __init__(self, inner: Generator, spec: GeneratorSpec):
        self.inner = inner
        self.spec = spec
        self.name = getattr(inner, "name", spec.provider)
        self.max_attempts = max(1, int(spec.max_retries))
        self._semaphore = asyncio.Semaphore(max(1, int(spec.max_concurrency)))
        self._backoff = wait_exponential_jitter(
            multiplier=spec.retry_base_delay_s,
            max=spec.retry_max_delay_s,
            jitter=spec.retry_base_delay_s,
        )

    # -- tenacity hooks -------------------------------------------------------------------------

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, RateLimited) and exc.retry_after is not None:
            return max(0.0, min(float(exc.retry_after), self.spec.retry_max_delay_s))
        return self._backoff(state)

    def _log_retry(self, request: Request):
        def before_sleep(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            wait = state.next_action.sleep if state.next_action else 0.0
            log.warning(
                "generator_retry",
                provider=self.spec.provider,
                model=request.model,
                attempt=state.attempt_number,
                max_attempts=self.max_attempts,
                wait=round(float(wait), 3),
                reason=_reason(exc),
                error=type(exc).__name__ if exc else None,
                task_id=request.task_id or None,
                arm=request.arm or None,
            )

        return before_sleep

    # -- Generator ------------------------------------------------------------------------------

    async def generate(self, request: Request) -> Response:
        queued = time.monotonic()
        async with self._semaphore:
            start = time.monotonic()
            attempts = 0
            retrying = AsyncRetrying(
                stop=stop_after_attempt(self.max_attempts),
                wait=self._wait,
                retry=retry_if_exception_type(RETRYABLE),
                before_sleep=self._log_retry(request),
                reraise=False,
            )
            try:
                async for attempt in retrying:
                    with attempt:
                        attempts = attempt.retry_state.attempt_number
                        response = await self.inner.generate(request)
            except RetryError as gave_up:
                last = gave_up.last_attempt.exception()
                raise self._exhausted(request, last, attempts) from last
            except GeneratorError as exc:
                if not isinstance(exc, RETRYABLE):
                    log.error(
                        "generator_failed",
                        provider=self.spec.provider,
                        model=request.model,
                        attempt=attempts,
                        reason=_reason(exc),
                    )
                raise
        return dataclasses.replace(
            response,
            attempts=attempts,
            latency_s=time.monotonic() - start,
            extra={**response.extra, "queue_s": start - queued},
        )

    def _exhausted(self, request: Request, last: BaseException | None, attempts: int) -> GeneratorError:
        why = _reason(last)
        message = (
            f"{self.spec.provider}/{request.model}: gave up after {attempts} attempt"
            f"{'s' if attempts != 1 else ''} (max_retries={self.max_attempts}); last error: {why}"
        )
        log.error(
            "generator_gave_up",
            provider=self.spec.provider,
            model=request.model,
            attempt=attempts,
            reason=why,
        )
        err: GeneratorError
        if isinstance(last, RateLimited):
            err = RateLimited(message, retry_after=last.retry_after)
        elif isinstance(last, GeneratorError):
            try:
                err = type(last)(message)
            except Exception:  # a subclass with another constructor
                err = Transient(message)
        else:  # cannot happen: only RETRYABLE errors are retried
            err = Fatal(message)
        err.attempts = attempts  # type: ignore[attr-defined]
        return err

    async def close(self) -> None:
        await self.inner.close()
