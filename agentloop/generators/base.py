"""What every generator takes and returns, and the errors that drive retries."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class Request:
    """One LLM call. `sample` and `round` make otherwise identical prompts distinct requests, so
    best-of-n samples are not served one cached answer."""

    model: str
    messages: tuple[Message, ...]
    max_tokens: int = 8192
    temperature: float = 0.7
    task_id: str = ""
    arm: str = ""
    sample: int = 0
    round: int = 0
    purpose: str = "kernel"  # "kernel" or "reflection"

    def key(self) -> str:
        """Hash of the whole request: the response cache's key."""
        payload = json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class Response:
    text: str
    model: str
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    finish_reason: str = ""
    cached: bool = False
    attempts: int = 1
    extra: dict = field(default_factory=dict)


class Generator(Protocol):
    name: str

    async def generate(self, request: Request) -> Response: ...

    async def close(self) -> None: ...


class GeneratorError(Exception):
    """Base of generator failures; the message says what happened in words."""


class RateLimited(GeneratorError):
    """HTTP 429 or an overload signal; `retry_after` seconds when the server said so."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class Transient(GeneratorError):
    """Worth retrying: 5xx, timeouts, dropped connections, a malformed or empty body."""


class Fatal(GeneratorError):
    """Not worth retrying: bad request, authentication, unknown model, exhausted recording."""


@dataclass
class GeneratorSpec:
    """Which generator to build and how; `options` holds provider-specific settings."""

    provider: str  # anthropic | openai | openai-compatible | transformers | replay | scripted
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    max_concurrency: int = 8
    timeout_s: float = 300.0
    max_retries: int = 6
    retry_base_delay_s: float = 1.0
    retry_max_delay_s: float = 60.0
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0
    options: dict = field(default_factory=dict)

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.price_in_per_mtok + tokens_out * self.price_out_per_mtok) / 1e6
