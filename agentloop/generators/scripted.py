"""A generator that answers from a script after a fixed delay: for tests and for measuring the
orchestrator without a model (its latency is whatever the script says)."""

from __future__ import annotations

import asyncio
from typing import Callable

from agentloop.generators.base import GeneratorSpec, Request, Response


class ScriptedGenerator:
    name = "scripted"

    def __init__(self, spec: GeneratorSpec, answer: Callable[[Request], str] | None = None):
        self.spec = spec
        self.answer = answer or (lambda request: spec.options.get("text", ""))
        self.latency_s = float(spec.options.get("latency_s", 0.0))
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0

    async def generate(self, request: Request) -> Response:
        self.calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            text = self.answer(request)
        finally:
            self.in_flight -= 1
        tokens_in = sum(len(m.content) for m in request.messages) // 4
        tokens_out = len(text) // 4
        return Response(text=text, model=self.spec.model, tokens_in=tokens_in, tokens_out=tokens_out,
                        cost_usd=self.spec.cost(tokens_in, tokens_out), latency_s=self.latency_s)

    async def close(self) -> None:
        pass
