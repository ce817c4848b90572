"""A scripted, real-socket fake of the OpenAI and Anthropic HTTP APIs, for tests.

    with FakeLLM() as server:
        server.script("openai", rate_limited(retry_after=0.5), ok("hello"))
        ... point OpenAI at server.openai_base_url, Anthropic at server.anthropic_base_url ...
        assert server.calls("openai") == 2

Endpoints: POST /v1/chat/completions ("openai") and POST /v1/messages ("anthropic"). Each endpoint
has a queue of behaviours, consumed one per request; when the queue is empty `default` (ok) is used.
Behaviours: ok(text), rate_limited(retry_after, retry_after_ms), server_error(status), overloaded(),
hang(seconds), malformed(), empty(kind), bad_request(), status(code), drop().

Every request is recorded (`requests`: endpoint, path, headers, parsed JSON body, arrival time);
`calls(endpoint)` counts them, `in_flight(endpoint)` is how many are being handled now and
`max_in_flight(endpoint)` the most handled at once.
The server is stdlib `ThreadingHTTPServer` on 127.0.0.1 and an ephemeral port, in a daemon thread,
speaking HTTP/1.1 with keep-alive like the real APIs.
"""

from __future__ import annotations

import collections
import itertools
import random
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ENDPOINTS = {"/v1/chat/completions": "openai", "/v1/messages": "anthropic"}
_ids = itertools.count(1)


# --------------------------------------------------------------------------------------------------
# behaviours


@dataclass
class Behaviour:
    kind: str
    text: str = ""
    status: int = 200
    retry_after: float | None = None
    retry_after_ms: float | None = None
    seconds: float = 0.0  # delay before answering (hang, slow ok)
    tokens_in: int | None = None
    tokens_out: int | None = None
    finish_reason: str | None = None
    empty_kind: str = "no_choices"
    blocks: list | None = None  # Anthropic content blocks, overriding `text`
    usage: bool = True  # False: the body has no "usage" object, as some compatible servers send
    headers: dict = field(default_factory=dict)


def ok(text: str = "ok", *, tokens_in: int | None = None, tokens_out: int | None = None,
       finish_reason: str | None = None, delay: float = 0.0, blocks: list | None = None,
       usage: bool = True) -> Behaviour:
    """A well-formed answer. Token counts default to whitespace words of the prompt / answer."""
    return Behaviour("ok", text=text, tokens_in=tokens_in, tokens_out=tokens_out, finish_reason=finish_reason,
                     seconds=delay, blocks=blocks, usage=usage)


def rate_limited(retry_after: float | None = None, retry_after_ms: float | None = None) -> Behaviour:
    """HTTP 429, with `retry-after` (seconds) and/or `retry-after-ms` headers when given."""
    return Behaviour("error", status=429, retry_after=retry_after, retry_after_ms=retry_after_ms)


def server_error(status: int = 500) -> Behaviour:
    return Behaviour("error", status=status)


def overloaded(retry_after: float | None = None) -> Behaviour:
    """HTTP 529, Anthropic's overloaded_error."""
    return Behaviour("error", status=529, retry_after=retry_after)


def bad_request() -> Behaviour:
    return Behaviour("error", status=400)


def status(code: int) -> Behaviour:
    return Behaviour("error", status=code)


def hang(seconds: float, text: str = "late") -> Behaviour:
    """Wait `seconds` before answering (a client with a shorter timeout gives up first)."""
    return Behaviour("ok", text=text, seconds=seconds)


def malformed(kind: str = "truncated_json") -> Behaviour:
    """A 200 the SDK cannot read: kind "truncated_json" (Content-Type application/json, body cut off
    mid-object), "html" (a proxy's text/html page) or "wrong_shape" (valid JSON, not a completion)."""
    return Behaviour("malformed", empty_kind=kind)


def empty(kind: str = "no_choices") -> Behaviour:
    """A 200 with nothing to read: kind "no_choices" (OpenAI choices [] / Anthropic content []),
    "null_content" (OpenAI content null / Anthropic no text block) or "empty_string" (content "")."""
    return Behaviour("empty", empty_kind=kind)


def drop() -> Behaviour:
    """Close the connection without answering."""
    return Behaviour("drop")


# --------------------------------------------------------------------------------------------------
# bodies

_ERROR_TYPES = {
    400: ("invalid_request_error", "invalid_request_error"),
    401: ("authentication_error", "authentication_error"),
    403: ("permission_error", "permission_error"),
    404: ("not_found_error", "not_found_error"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    500: ("api_error", "server_error"),
    529: ("overloaded_error", "server_error"),
}


def _words(body: dict) -> int:
    n = 0
    system = body.get("system")
    if isinstance(system, str):
        n += len(system.split())
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            n += len(content.split())
    return n


def _error_body(endpoint: str, code: int) -> dict:
    anthropic_type, openai_type = _ERROR_TYPES.get(code, ("api_error", "server_error"))
    message = f"fake_llm scripted HTTP {code}"
    if endpoint == "anthropic":
        return {"type": "error", "error": {"type": anthropic_type, "message": message}}
    return {"error": {"message": message, "type": openai_type, "param": None, "code": None}}


def _ok_body(endpoint: str, b: Behaviour, request: dict) -> dict:
    tokens_in = b.tokens_in if b.tokens_in is not None else _words(request)
    tokens_out = b.tokens_out if b.tokens_out is not None else len(b.text.split())
    model = request.get("model", "fake-model")
    n = next(_ids)
    if endpoint == "anthropic":
        content = b.blocks if b.blocks is not None else [{"type": "text", "text": b.text}]
        body = {
            "id": f"msg_fake{n}", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": b.finish_reason or "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
        }
    else:
        body = {
            "id": f"chatcmpl-fake{n}", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{
                "index": 0, "logprobs": None, "finish_reason": b.finish_reason or "stop",
                "message": {"role": "assistant", "content": b.text, "refusal": None},
            }],
            "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
                      "total_tokens": tokens_in + tokens_out},
        }
    if not b.usage:
        body.pop("usage")
    return body


def _empty_body(endpoint: str, b: Behaviour, request: dict) -> dict:
    body = _ok_body(endpoint, ok(""), request)
    if endpoint == "anthropic":
        if b.empty_kind == "no_choices":
            body["content"] = []
        elif b.empty_kind == "null_content":
            body["content"] = [{"type": "thinking", "thinking": "hmm", "signature": "sig"}]
        else:
            body["content"] = [{"type": "text", "text": ""}]
    else:
        if b.empty_kind == "no_choices":
            body["choices"] = []
        elif b.empty_kind == "null_content":
            body["choices"][0]["message"]["content"] = None
        else:
            body["choices"][0]["message"]["content"] = ""
    return body


# --------------------------------------------------------------------------------------------------
# server


@dataclass
class Recorded:
    endpoint: str
    path: str
    headers: dict
    body: Any
    at: float


def chaos_fault(rng) -> Behaviour:
    """One random fault: a rate limit, a 5xx, an overload, a slow error, a malformed or empty body,
    or a dropped connection. Never a successful answer, so answers can be counted exactly."""
    return rng.choice([
        rate_limited(retry_after=0.05), server_error(500), server_error(503), overloaded(),
        Behaviour("error", status=504, seconds=0.3), malformed(rng.choice(["truncated_json", "html", "wrong_shape"])),
        empty(rng.choice(["no_choices", "null_content", "empty_string"])), drop(),
    ])


class FakeLLM:
    def __init__(self, default: Behaviour | None = None, chaos: float = 0.0, seed: int = 0):
        """`chaos`: the chance that a request with nothing scripted gets a random fault instead of
        `default` (see chaos_fault)."""
        self.default = default or ok("default reply from fake_llm")
        self.chaos = chaos
        self._rng = random.Random(seed)
        self._answered = collections.Counter()
        self.requests: list[Recorded] = []
        self._queues: dict[str, collections.deque] = {name: collections.deque() for name in ENDPOINTS.values()}
        self._in_flight = collections.Counter()
        self._max_in_flight = collections.Counter()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # scripting and inspection

    def script(self, endpoint: str, *behaviours: Behaviour) -> "FakeLLM":
        if endpoint not in self._queues:
            raise ValueError(f"unknown endpoint {endpoint!r}; one of {sorted(self._queues)}")
        with self._lock:
            self._queues[endpoint].extend(behaviours)
        return self

    def pending(self, endpoint: str) -> int:
        with self._lock:
            return len(self._queues[endpoint])

    def calls(self, endpoint: str) -> int:
        with self._lock:
            return sum(1 for r in self.requests if r.endpoint == endpoint)

    def bodies(self, endpoint: str) -> list:
        with self._lock:
            return [r.body for r in self.requests if r.endpoint == endpoint]

    def times(self, endpoint: str) -> list[float]:
        with self._lock:
            return [r.at for r in self.requests if r.endpoint == endpoint]

    def in_flight(self, endpoint: str) -> int:
        """Requests received and not yet answered, now."""
        with self._lock:
            return self._in_flight[endpoint]

    def max_in_flight(self, endpoint: str) -> int:
        with self._lock:
            return self._max_in_flight[endpoint]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            for queue in self._queues.values():
                queue.clear()
            self._in_flight.clear()
            self._max_in_flight.clear()

    # lifecycle

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return self.base_url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    def start(self) -> "FakeLLM":
        fake = self

        class Handler(_Handler):
            server_state = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="fake_llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "FakeLLM":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # used by the handler

    def _next(self, endpoint: str) -> Behaviour:
        with self._lock:
            queue = self._queues[endpoint]
            if queue:
                return queue.popleft()
            if self.chaos and self._rng.random() < self.chaos:
                return chaos_fault(self._rng)
            return self.default

    def answered(self, endpoint: str) -> int:
        """Successful answers written out in full (whether or not the client was still there)."""
        with self._lock:
            return self._answered[endpoint]

    def _record(self, recorded: Recorded) -> None:
        endpoint = recorded.endpoint
        with self._lock:
            self.requests.append(recorded)
            self._in_flight[endpoint] += 1
            self._max_in_flight[endpoint] = max(self._max_in_flight[endpoint], self._in_flight[endpoint])

    def _leave(self, endpoint: str) -> None:
        with self._lock:
            self._in_flight[endpoint] -= 1


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_state: FakeLLM

    def log_message(self, format, *args):  # keep pytest output quiet
        pass

    def do_POST(self):
        fake = self.server_state
        path = self.path.split("?", 1)[0]
        endpoint = ENDPOINTS.get(path)
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if endpoint is None:
            self._send(404, {"error": {"message": f"fake_llm: no route {path}", "type": "not_found"}})
            return
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        fake._record(Recorded(endpoint, path, {k.lower(): v for k, v in self.headers.items()}, body,
                              time.monotonic()))  # counted in calls() and in_flight() at once
        behaviour = fake._next(endpoint)
        try:
            if behaviour.seconds:
                fake._stopping.wait(behaviour.seconds)
            self._act(endpoint, behaviour, body if isinstance(body, dict) else {})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (timeout) before we answered
        finally:
            fake._leave(endpoint)

    def _act(self, endpoint: str, b: Behaviour, request: dict) -> None:
        if b.kind == "ok":
            self._send(200, _ok_body(endpoint, b, request))
            with self.server_state._lock:
                self.server_state._answered[endpoint] += 1
        elif b.kind == "empty":
            self._send(200, _empty_body(endpoint, b, request))
        elif b.kind == "malformed":
            if b.empty_kind == "html":
                self._send_raw(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
            elif b.empty_kind == "wrong_shape":
                self._send(200, {"choices": "none", "content": 42, "usage": "lots"})
            else:
                self._send_raw(200, b'{"id": "chatcmpl-broken", "choices": [ {"index": 0, "mess', "application/json")
        elif b.kind == "drop":
            self.close_connection = True
            self.connection.shutdown(2)
        elif b.kind == "error":
            headers = dict(b.headers)
            if b.retry_after is not None:
                headers["retry-after"] = _number(b.retry_after)
            if b.retry_after_ms is not None:
                headers["retry-after-ms"] = _number(b.retry_after_ms)
            # Like the real APIs: invite retries of 408/409/429/5xx. A client whose own SDK retries were
            # left on would retry these, and the call counts in the tests would show it.
            retryable = b.status in (408, 409, 429) or b.status >= 500
            headers.setdefault("x-should-retry", "true" if retryable else "false")
            self._send(b.status, _error_body(endpoint, b.status), headers)
        else:  # pragma: no cover
            raise ValueError(b.kind)

    def _send(self, code: int, payload: dict, headers: dict | None = None) -> None:
        self._send_raw(code, json.dumps(payload).encode(), "application/json", headers)

    def _send_raw(self, code: int, data: bytes, content_type: str, headers: dict | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
