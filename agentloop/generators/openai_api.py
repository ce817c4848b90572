"""OpenAI Chat Completions, for provider "openai" and "openai-compatible" (vLLM, SGLang, ...).

The `openai` package is imported inside the constructor, never at module import, so this module
loads on machines without the SDK. The SDK's own retries are off (`max_retries=0`): retries belong
to `Resilient`, which this class feeds classified errors:

* 429 -> RateLimited, with the server's `retry-after-ms` / `retry-after` header when present;
* timeouts, dropped connections, 5xx, 408 and 409 (the statuses the SDK itself would retry) ->
  Transient;
* any other 4xx (400, 401, 403, 404, 422, ...) -> Fatal;
* a 2xx body the SDK cannot parse, or one with no choices or empty content -> Transient.

Options (spec.options): "max_tokens_param" ("max_tokens", the default and what vLLM/SGLang expect,
or "max_completion_tokens" for OpenAI reasoning models that reject max_tokens); "extra_body" (a dict
merged into the request body, e.g. {"top_k": 20} for vLLM); "omit_temperature" (bool, for models that
refuse a temperature).
"""

from __future__ import annotations

import os
import time

from ._http import describe_status_error, retry_after_seconds
from .base import Fatal, GeneratorSpec, RateLimited, Request, Response, Transient


def _api_key(spec: GeneratorSpec, default_env: str) -> str:
    env = spec.api_key_env or default_env
    key = os.environ.get(env)
    if key:
        return key
    if spec.base_url:
        return "EMPTY"  # self-hosted servers (vLLM, SGLang) accept any key
    raise Fatal(f"{spec.provider}: environment variable {env} is not set (and no base_url is given)")


class OpenAIGenerator:
    def __init__(self, spec: GeneratorSpec):
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - depends on the machine
            raise Fatal("the 'openai' package is not installed (pip install openai)") from exc
        self._openai = openai
        self.spec = spec
        self.name = f"{spec.provider}:{spec.model}"
        self.client = openai.AsyncOpenAI(
            api_key=_api_key(spec, "OPENAI_API_KEY"),
            base_url=spec.base_url,
            timeout=spec.timeout_s,
            max_retries=0,
        )

    def _body(self, request: Request) -> dict:
        options = self.spec.options or {}
        body: dict = {
            "model": request.model or self.spec.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        }
        body[options.get("max_tokens_param", "max_tokens")] = request.max_tokens
        if not options.get("omit_temperature"):
            body["temperature"] = request.temperature
        if options.get("extra_body"):
            body["extra_body"] = dict(options["extra_body"])
        return body

    async def generate(self, request: Request) -> Response:
        openai = self._openai
        provider = self.spec.provider
        start = time.monotonic()
        try:
            completion = await self.client.chat.completions.create(**self._body(request))
        except openai.RateLimitError as exc:
            raise RateLimited(
                describe_status_error(provider, exc), retry_after=retry_after_seconds(exc.response.headers)
            ) from exc
        except openai.APITimeoutError as exc:
            raise Transient(f"{provider}: request timed out (timeout_s={self.spec.timeout_s})") from exc
        except openai.APIConnectionError as exc:
            raise Transient(f"{provider}: connection error: {exc.__cause__ or exc}") from exc
        except openai.APIStatusError as exc:
            if exc.status_code >= 500 or exc.status_code in (408, 409):
                raise Transient(describe_status_error(provider, exc)) from exc
            raise Fatal(describe_status_error(provider, exc)) from exc
        except openai.APIResponseValidationError as exc:
            raise Transient(f"{provider}: response body did not match the schema: {exc}") from exc
        except ValueError as exc:  # json.JSONDecodeError, pydantic.ValidationError
            raise Transient(f"{provider}: could not parse the response body: {exc}") from exc
        latency = time.monotonic() - start
        return self._response(request, completion, latency)

    def _response(self, request: Request, completion, latency: float) -> Response:
        provider = self.spec.provider
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list):
            raise Transient(f"{provider}: could not parse the response body: {str(completion)[:200]!r}")
        if not choices:
            raise Transient(f"{provider}: empty response (no choices)")
        choice = choices[0]
        message = getattr(choice, "message", None)
        text = getattr(message, "content", None)
        finish_reason = getattr(choice, "finish_reason", None) or ""
        if not isinstance(text, str) or not text.strip():
            raise Transient(f"{provider}: empty response (content {text!r}, finish_reason {finish_reason!r})")
        usage = getattr(completion, "usage", None)
        tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
        extra: dict = {"id": getattr(completion, "id", None)}
        details = getattr(usage, "completion_tokens_details", None)
        reasoning = getattr(details, "reasoning_tokens", None)
        if reasoning:
            extra["reasoning_tokens"] = int(reasoning)
        return Response(
            text=text,
            model=getattr(completion, "model", None) or request.model,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost_usd=self.spec.cost(tokens_in, tokens_out),
            latency_s=latency,
            finish_reason=str(finish_reason),
            extra=extra,
        )

    async def close(self) -> None:
        await self.client.close()


__all__ = ["OpenAIGenerator"]
