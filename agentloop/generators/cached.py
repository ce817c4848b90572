"""A response cache in the trace store, keyed by the hash of the whole request: a paid answer is
stored the moment it arrives, before its code is evaluated, so no resumed run pays for it again."""

from __future__ import annotations

import dataclasses

from agentloop.generators.base import Generator, Request, Response
from traces.store import TraceStore


class CachedGenerator:
    def __init__(self, inner: Generator, store: TraceStore):
        self.inner = inner
        self.store = store
        self.name = inner.name
        self.hits = 0

    async def generate(self, request: Request) -> Response:
        key = request.key()
        cached = self.store.cached_response(key)
        if cached is not None:
            self.hits += 1
            return Response(**{**cached, "cached": True})
        response = await self.inner.generate(request)
        self.store.put_response(key, dataclasses.asdict(request), dataclasses.asdict(response))
        return response

    async def close(self) -> None:
        await self.inner.close()
