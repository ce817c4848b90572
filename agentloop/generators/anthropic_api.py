"""Anthropic Messages API.

The `anthropic` package is imported inside the constructor, never at module import. The SDK's own
retries are off (`max_retries=0`); `Resilient` retries on the errors raised here:

* 429 (rate_limit_error) -> RateLimited, with `retry-after-ms` / `retry-after` when sent;
* 529 (overloaded_error) -> RateLimited as well: it is the API's "too much load, back off" signal
  (base.RateLimited covers overload signals), and a retry-after header, when present, is honoured;
  without one it gets the same exponential backoff as a Transient error;
* timeouts, dropped connections, other 5xx, 408 and 409 -> Transient;
* any other 4xx (400, 401, 403, 404, 413, 422, ...) -> Fatal;
* a 2xx body the SDK cannot parse, or one with no text -> Transient.

System messages are joined (blank line between) into the `system=` parameter; the rest go to
`messages` in order. The answer is the concatenation of the text blocks (thinking and other blocks
are skipped). spec.timeout_s is set on the client and passed on every call: with its default
timeout the SDK refuses non-streaming calls whose max_tokens suggests more than ten minutes
(ValueError "Streaming is required ...").

`request.temperature` is not sent by default: the SDK (1.x and later) dropped `temperature` from
`messages.create()`, and the newest Claude models answer 400 to it. With
options={"send_temperature": True} it goes in the body through `extra_body` (older models accept
it). Options: "extra_body" (a dict merged into the body), "send_temperature".
"""

from __future__ import annotations

import os
import time

from ._http import describe_status_error, retry_after_seconds
from .base import Fatal, GeneratorSpec, RateLimited, Request, Response, Transient

OVERLOADED = 529
CACHE_TOKEN_FIELDS = ("cache_creation_input_tokens", "cache_read_input_tokens")


class AnthropicGenerator:
    def __init__(self, spec: GeneratorSpec):
        try:
            import anthropic
        except ImportError as exc:  # pragma: no cover - depends on the machine
            raise Fatal("the 'anthropic' package is not installed (pip install anthropic)") from exc
        self._anthropic = anthropic
        self.spec = spec
        self.name = f"{spec.provider}:{spec.model}"
        env = spec.api_key_env or "ANTHROPIC_API_KEY"
        key = os.environ.get(env)
        if not key:
            if not spec.base_url:
                raise Fatal(f"{spec.provider}: environment variable {env} is not set (and no base_url is given)")
            key = "EMPTY"  # a proxy or local server that does not check keys
        self.client = anthropic.AsyncAnthropic(
            api_key=key,
            base_url=spec.base_url,
            timeout=spec.timeout_s,
            max_retries=0,
        )

    def _body(self, request: Request) -> dict:
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        body: dict = {
            "model": request.model or self.spec.model,
            "max_tokens": request.max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages if m.role != "system"],
            "timeout": self.spec.timeout_s,
        }
        if system:
            body["system"] = system
        extra_body = self._extra_body(request)
        if extra_body:
            body["extra_body"] = extra_body
        return body

    def _extra_body(self, request: Request) -> dict:
        """options["extra_body"], plus the temperature where options["send_temperature"] asks for it."""
        options = self.spec.options or {}
        extra_body = dict(options.get("extra_body") or {})
        if options.get("send_temperature"):
            extra_body["temperature"] = request.temperature
        return extra_body

    async def generate(self, request: Request) -> Response:
        anthropic = self._anthropic
        start = time.monotonic()
        try:
            message = await self.client.messages.create(**self._body(request))
        except (anthropic.APIStatusError, anthropic.APIConnectionError, anthropic.APIResponseValidationError,
                ValueError) as exc:
            raise self._failure(exc) from exc
        latency = time.monotonic() - start
        return self._response(request, message, latency)

    def _failure(self, exc: Exception) -> Exception:
        """The error `Resilient` acts on for a failed call: RateLimited, Transient or Fatal."""
        anthropic = self._anthropic
        provider = self.spec.provider
        if isinstance(exc, anthropic.APITimeoutError):
            return Transient(f"{provider}: request timed out (timeout_s={self.spec.timeout_s})")
        if isinstance(exc, anthropic.APIConnectionError):
            return Transient(f"{provider}: connection error: {exc.__cause__ or exc}")
        if isinstance(exc, anthropic.APIStatusError):
            return self._status_failure(exc)
        if isinstance(exc, anthropic.APIResponseValidationError):
            return Transient(f"{provider}: response body did not match the schema: {exc}")
        # a ValueError: json.JSONDecodeError, pydantic.ValidationError
        return Transient(f"{provider}: could not parse the response body: {exc}")

    def _status_failure(self, exc) -> Exception:
        description = describe_status_error(self.spec.provider, exc)
        if isinstance(exc, self._anthropic.RateLimitError) or exc.status_code == OVERLOADED:
            return RateLimited(description, retry_after=retry_after_seconds(exc.response.headers))
        if exc.status_code >= 500 or exc.status_code in (408, 409):
            return Transient(description)
        return Fatal(description)

    def _response(self, request: Request, message, latency: float) -> Response:
        provider = self.spec.provider
        content = getattr(message, "content", None)
        if not isinstance(content, list):
            raise Transient(f"{provider}: could not parse the response body: {str(message)[:200]!r}")
        text = _text_of(content)
        stop_reason = getattr(message, "stop_reason", None) or ""
        if not text.strip():
            raise Transient(f"{provider}: empty response ({len(content)} content blocks, stop_reason {stop_reason!r})")
        usage = getattr(message, "usage", None)
        tokens_in = int(getattr(usage, "input_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "output_tokens", 0) or 0)
        return Response(
            text=text,
            model=getattr(message, "model", None) or request.model,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost_usd=self.spec.cost(tokens_in, tokens_out),
            latency_s=latency,
            finish_reason=str(stop_reason),
            extra={"id": getattr(message, "id", None), **_cache_tokens(usage)},
        )

    async def close(self) -> None:
        await self.client.close()


def _text_of(content: list) -> str:
    """The answer's text blocks, joined; thinking and other blocks are skipped."""
    return "".join(
        block.text for block in content if getattr(block, "type", None) == "text" and isinstance(block.text, str)
    )


def _cache_tokens(usage) -> dict[str, int]:
    """The prompt cache's token counts, where the API reported any."""
    counts = {field: getattr(usage, field, None) for field in CACHE_TOKEN_FIELDS}
    return {field: int(value) for field, value in counts.items() if value}


__all__ = ["AnthropicGenerator"]
