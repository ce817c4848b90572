"""The LLM generator layer against a real local HTTP server, through the real openai and anthropic
SDK clients (no mocks of the SDKs): retries, waits, error classes, accounting, concurrency, routing.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from agentloop.generators.base import Fatal, GeneratorSpec, Message, RateLimited, Request, Transient
from agentloop.generators.resilience import Resilient
from tests.agentloop.fake_llm import (
    FakeLLM,
    bad_request,
    drop,
    empty,
    hang,
    malformed,
    ok,
    overloaded,
    rate_limited,
    server_error,
    status,
)

ROOT = Path(__file__).resolve().parents[2]
PROVIDERS = ["openai", "anthropic"]
KEY_ENV = "AGENTLOOP_TEST_LLM_KEY"
FAST = dict(retry_base_delay_s=0.01, retry_max_delay_s=2.0, max_retries=4, timeout_s=5.0)

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def server():
    with FakeLLM() as fake:
        yield fake


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-123")
    return "sk-test-123"


def spec_for(provider: str, server: FakeLLM, **overrides) -> GeneratorSpec:
    fields = dict(FAST, api_key_env=KEY_ENV)
    if provider == "anthropic":
        fields.update(provider="anthropic", model="claude-test", base_url=server.anthropic_base_url)
    else:
        fields.update(provider="openai", model="gpt-test", base_url=server.openai_base_url)
    fields.update(overrides)
    return GeneratorSpec(**fields)


def build(spec: GeneratorSpec):
    if spec.provider == "anthropic":
        from agentloop.generators.anthropic_api import AnthropicGenerator

        return AnthropicGenerator(spec)
    from agentloop.generators.openai_api import OpenAIGenerator

    return OpenAIGenerator(spec)


def request(model: str = "gpt-test", text: str = "write a kernel", **kw) -> Request:
    return Request(model=model, messages=(Message("system", "you write triton"), Message("user", text)), **kw)


def run(spec: GeneratorSpec, *requests: Request, resilient: bool = True, return_exceptions: bool = False):
    """Build the generator, send the requests concurrently, close it; results in order."""

    async def go():
        inner = build(spec)
        gen = Resilient(inner, spec) if resilient else inner
        try:
            return await asyncio.gather(*(gen.generate(r) for r in requests), return_exceptions=return_exceptions)
        finally:
            await gen.close()

    return asyncio.run(go())


def run_one(spec: GeneratorSpec, req: Request | None = None, **kw):
    return run(spec, req or request(spec.model), **kw)[0]


def gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in zip(times, times[1:], strict=False)]


# -- success and accounting ------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_success_counts_tokens_cost_and_sends_the_request(server, provider, key):
    spec = spec_for(provider, server, price_in_per_mtok=3.0, price_out_per_mtok=15.0)
    server.script(provider, ok("def kernel(): pass", tokens_in=1200, tokens_out=345, finish_reason="length"
                               if provider == "openai" else "max_tokens"))
    req = request(spec.model, max_tokens=777, temperature=0.3)
    response = run_one(spec, req)

    assert response.text == "def kernel(): pass"
    assert (response.tokens_in, response.tokens_out) == (1200, 345)
    assert response.cost_usd == pytest.approx((1200 * 3.0 + 345 * 15.0) / 1e6)
    assert response.finish_reason == ("length" if provider == "openai" else "max_tokens")
    assert response.attempts == 1 and response.latency_s > 0 and response.model == spec.model
    assert response.extra["id"]
    assert server.calls(provider) == 1

    sent = server.requests[0]
    assert sent.headers["authorization"] == f"Bearer {key}"
    assert sent.headers["x-stainless-retry-count"] == "0"
    assert sent.body["model"] == spec.model and sent.body["max_tokens"] == 777
    if provider == "openai":
        assert sent.body["temperature"] == 0.3
        assert sent.body["messages"] == [{"role": "system", "content": "you write triton"},
                                         {"role": "user", "content": "write a kernel"}]
    else:
        assert "temperature" not in sent.body  # not sent unless options={"send_temperature": True}
        assert sent.body["system"] == "you write triton"
        assert sent.body["messages"] == [{"role": "user", "content": "write a kernel"}]


def test_usage_absent_counts_zero(server):
    spec = spec_for("openai", server, price_in_per_mtok=3.0)
    server.script("openai", ok("text", usage=False))
    response = run_one(spec)
    assert response.text == "text" and (response.tokens_in, response.tokens_out, response.cost_usd) == (0, 0, 0.0)


# -- retries -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rate_limit_waits_the_retry_after_seconds(server, provider):
    spec = spec_for(provider, server)  # backoff alone would wait ~0.01-0.02 s
    server.script(provider, rate_limited(retry_after=1), ok("after the wait"))
    with capture_logs() as logs:
        response = run_one(spec)

    assert response.text == "after the wait" and response.attempts == 2
    assert server.calls(provider) == 2
    (gap,) = gaps(server.times(provider))
    assert gap >= 1.0
    assert response.latency_s >= 1.0
    retries = [entry for entry in logs if entry["event"] == "generator_retry"]
    assert len(retries) == 1
    entry = retries[0]
    assert entry["provider"] == provider and entry["model"] == spec.model
    assert entry["attempt"] == 1 and entry["wait"] == pytest.approx(1.0)
    assert "RateLimited" in entry["reason"] and "429" in entry["reason"]


def test_rate_limit_retry_after_ms_is_read_in_milliseconds(server):
    spec = spec_for("openai", server, retry_max_delay_s=10.0)  # read as seconds it would wait the 10 s cap
    server.script("openai", rate_limited(retry_after_ms=400), ok("x"))
    with capture_logs() as logs:
        response = run_one(spec)
    (gap,) = gaps(server.times("openai"))
    assert [e["wait"] for e in logs if e["event"] == "generator_retry"] == [0.4]
    assert gap >= 0.4 and response.attempts == 2


def test_rate_limit_retry_after_is_capped_by_retry_max_delay(server):
    spec = spec_for("anthropic", server, retry_max_delay_s=0.2)
    server.script("anthropic", rate_limited(retry_after=30), ok("x"))
    with capture_logs() as logs:
        response = run_one(spec)
    (gap,) = gaps(server.times("anthropic"))
    assert [e["wait"] for e in logs if e["event"] == "generator_retry"] == [0.2]  # not the 30 s asked for
    assert gap >= 0.2 and response.attempts == 2


def test_rate_limit_without_retry_after_backs_off_exponentially(server):
    spec = spec_for("openai", server, retry_base_delay_s=0.1, max_retries=4)
    server.script("openai", rate_limited(), rate_limited(), ok("x"))
    response = run_one(spec)
    first, second = gaps(server.times("openai"))
    # Waits are 0.1 * 2**(n-1) plus 0..0.1 of jitter: 0.1-0.2 s, then 0.2-0.3 s.
    assert 0.1 <= first < 1.0 and 0.2 <= second < 1.0
    assert response.attempts == 3


@pytest.mark.parametrize("provider", PROVIDERS)
def test_server_error_then_success(server, provider):
    spec = spec_for(provider, server)
    server.script(provider, server_error(500), server_error(503), ok("recovered"))
    response = run_one(spec)
    assert response.text == "recovered" and response.attempts == 3 and server.calls(provider) == 3


def test_anthropic_overloaded_529_is_rate_limited_and_honours_retry_after(server):
    spec = spec_for("anthropic", server)
    server.script("anthropic", overloaded(retry_after=0.5), ok("x"))
    with capture_logs() as logs:
        response = run_one(spec)
    (gap,) = gaps(server.times("anthropic"))
    assert gap >= 0.5 and response.attempts == 2
    (entry,) = [e for e in logs if e["event"] == "generator_retry"]
    assert entry["error"] == "RateLimited" and "529" in entry["reason"]


def test_anthropic_overloaded_raw_error_class(server):
    spec = spec_for("anthropic", server)
    server.script("anthropic", overloaded())
    with pytest.raises(RateLimited) as caught:
        run_one(spec, resilient=False)
    assert caught.value.retry_after is None


@pytest.mark.parametrize("provider", PROVIDERS)
def test_client_timeout_then_success(server, provider):
    spec = spec_for(provider, server, timeout_s=0.3)
    server.script(provider, hang(5.0), ok("quick this time"))
    with capture_logs() as logs:
        response = run_one(spec)
    assert response.text == "quick this time" and response.attempts == 2
    assert server.calls(provider) == 2
    (retry,) = [e for e in logs if e["event"] == "generator_retry"]
    assert "timed out" in retry["reason"].lower() or "timeout" in retry["reason"].lower(), retry
    assert response.latency_s >= 0.3  # the client gave up on the hung request instead of waiting it out


@pytest.mark.parametrize("provider", PROVIDERS)
def test_timeout_raw_error_is_transient(server, provider):
    spec = spec_for(provider, server, timeout_s=0.2)
    server.script(provider, hang(2.0))
    with pytest.raises(Transient, match="timed out"):
        run_one(spec, resilient=False)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("kind", ["truncated_json", "html", "wrong_shape"])
def test_malformed_body_then_success(server, provider, kind):
    spec = spec_for(provider, server)
    server.script(provider, malformed(kind), ok("parsed"))
    response = run_one(spec)
    assert response.text == "parsed" and response.attempts == 2 and server.calls(provider) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("kind", ["no_choices", "null_content", "empty_string"])
def test_empty_response_then_success(server, provider, kind):
    spec = spec_for(provider, server)
    server.script(provider, empty(kind), ok("something"))
    with capture_logs() as logs:
        response = run_one(spec)
    assert response.text == "something" and response.attempts == 2 and server.calls(provider) == 2
    (entry,) = [e for e in logs if e["event"] == "generator_retry"]
    assert "empty response" in entry["reason"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_dropped_connection_then_success(server, provider):
    spec = spec_for(provider, server)
    server.script(provider, drop(), ok("reconnected"))
    response = run_one(spec)
    assert response.text == "reconnected" and response.attempts == 2


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("code", [400, 401, 403, 404, 422])
def test_client_errors_are_fatal_without_retry(server, provider, code):
    spec = spec_for(provider, server, max_retries=5)
    server.script(provider, bad_request() if code == 400 else status(code), ok("never reached"))
    with capture_logs() as logs:
        with pytest.raises(Fatal, match=str(code)):
            run_one(spec)
    assert server.calls(provider) == 1
    assert server.pending(provider) == 1
    assert not [e for e in logs if e["event"] == "generator_retry"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_retries_exhausted_raises_after_exactly_max_retries_calls(server, provider):
    spec = spec_for(provider, server, max_retries=3)
    server.script(provider, *[server_error(500)] * 6)
    with capture_logs() as logs:
        with pytest.raises(Transient) as caught:
            run_one(spec)
    err = caught.value
    assert server.calls(provider) == 3 and server.pending(provider) == 3
    assert "gave up after 3 attempts" in str(err) and "500" in str(err)
    assert err.attempts == 3
    assert isinstance(err.__cause__, Transient)
    assert [e["attempt"] for e in logs if e["event"] == "generator_retry"] == [1, 2]
    assert [e["event"] for e in logs if e["event"] == "generator_gave_up"] == ["generator_gave_up"]


def test_rate_limits_exhausted_raise_rate_limited(server):
    spec = spec_for("openai", server, max_retries=2)
    server.script("openai", rate_limited(retry_after=0.05), rate_limited(retry_after=0.05), ok("late"))
    with pytest.raises(RateLimited, match="gave up after 2 attempts") as caught:
        run_one(spec)
    assert caught.value.retry_after == pytest.approx(0.05)
    assert server.calls("openai") == 2


def test_max_retries_one_means_a_single_attempt(server):
    spec = spec_for("anthropic", server, max_retries=1)
    server.script("anthropic", server_error(502), ok("x"))
    with pytest.raises(Transient, match="gave up after 1 attempt"):
        run_one(spec)
    assert server.calls("anthropic") == 1


def test_retryable_class_mixes_share_the_attempt_budget(server):
    spec = spec_for("openai", server, max_retries=4)
    server.script("openai", rate_limited(retry_after=0.05), server_error(500), malformed(), empty(), ok("x"))
    with pytest.raises(Transient, match="empty response"):
        run_one(spec)
    assert server.calls("openai") == 4


class _Stub:
    """A Generator that raises the given exceptions in turn, then answers."""

    name = "stub"

    def __init__(self, *errors: BaseException):
        self.errors = list(errors)
        self.calls = 0

    async def generate(self, req: Request):
        from agentloop.generators.base import Response

        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return Response(text="stub answer", model=req.model, latency_s=123.0)

    async def close(self) -> None:
        pass


@pytest.mark.parametrize("error", [ValueError("a bug"), KeyError("x"), Fatal("no such model")])
def test_errors_outside_the_retryable_classes_are_raised_at_once(error):
    spec = GeneratorSpec(provider="stub", model="m", **FAST)
    stub = _Stub(error)
    with pytest.raises(type(error)) as caught:
        asyncio.run(Resilient(stub, spec).generate(request("m")))
    assert caught.value is error and stub.calls == 1


def test_resilient_sets_attempts_and_whole_latency():
    spec = GeneratorSpec(provider="stub", model="m", **dict(FAST, retry_base_delay_s=0.1))
    stub = _Stub(Transient("blip"), RateLimited("slow down", retry_after=0.2))
    response = asyncio.run(Resilient(stub, spec).generate(request("m")))
    assert response.text == "stub answer" and response.attempts == 3 and stub.calls == 3
    assert 0.3 <= response.latency_s < 1.5  # both waits, not the inner generator's own figure


# -- concurrency -----------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("limit", [2, 6])
def test_concurrency_limit_is_what_the_server_sees(server, provider, limit):
    spec = spec_for(provider, server, max_concurrency=limit)
    server.default = ok("slow", delay=0.3)
    started = time.monotonic()
    responses = run(spec, *[request(spec.model, text=f"call {i}", sample=i) for i in range(6)])
    elapsed = time.monotonic() - started
    assert [r.text for r in responses] == ["slow"] * 6
    assert server.calls(provider) == 6
    assert server.max_in_flight(provider) == limit
    assert elapsed >= 0.3 * (6 // limit) - 0.05
    if limit == 2:
        # queued calls report their wait for the semaphore as queue_s, not as latency
        most_queued = max(responses, key=lambda r: r.extra["queue_s"])
        assert most_queued.extra["queue_s"] >= 0.5
        assert 0.3 <= most_queued.latency_s < 0.3 + most_queued.extra["queue_s"]


def test_a_call_backing_off_keeps_its_slot(server):
    spec = spec_for("openai", server, max_concurrency=1)
    server.script("openai", rate_limited(retry_after=0.5), ok("first"), ok("second"))
    first, second = run(spec, request("gpt-test", text="a"), request("gpt-test", text="b"))
    assert (first.text, second.text) == ("first", "second")
    bodies = [b["messages"][-1]["content"] for b in server.bodies("openai")]
    assert bodies == ["a", "a", "b"]  # "b" did not slip in during "a"'s back-off


# -- routing, keys, base_url ---------------------------------------------------------------------------


def test_anthropic_system_messages_go_to_system_and_text_blocks_are_joined(server):
    spec = spec_for("anthropic", server, options={"send_temperature": True})
    server.script("anthropic", ok(blocks=[
        {"type": "thinking", "thinking": "let me think", "signature": "sig"},
        {"type": "text", "text": "part one, "},
        {"type": "text", "text": "part two"},
    ]))
    req = Request(model="claude-test", temperature=0.25, messages=(
        Message("system", "rule one"),
        Message("user", "first question"),
        Message("assistant", "first answer"),
        Message("system", "rule two"),
        Message("user", "second question"),
    ))
    response = run_one(spec, req)
    assert response.text == "part one, part two"
    body = server.bodies("anthropic")[0]
    assert body["system"] == "rule one\n\nrule two"
    assert body["messages"] == [
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "first answer"},
        {"role": "user", "content": "second question"},
    ]
    assert body["temperature"] == 0.25


def test_anthropic_without_system_message_sends_no_system(server):
    spec = spec_for("anthropic", server)
    run_one(spec, Request(model="claude-test", messages=(Message("user", "hi"),)))
    assert "system" not in server.bodies("anthropic")[0]


def test_anthropic_large_max_tokens_is_not_refused_by_the_sdk(server):
    # With its default timeout the SDK refuses non-streaming calls it expects to take more than ten
    # minutes (max_tokens above ~21k) with ValueError("Streaming is required ..."); the generator
    # always sets spec.timeout_s on the client and on the call, which turns that check off.
    spec = spec_for("anthropic", server)
    response = run_one(spec, request("claude-test", max_tokens=128_000))
    assert response.text and server.bodies("anthropic")[0]["max_tokens"] == 128_000


def test_openai_compatible_without_a_key_sends_empty(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = GeneratorSpec(provider="openai-compatible", model="Qwen/Qwen3-8B", base_url=server.openai_base_url,
                         **FAST)
    server.script("openai", ok("from vllm"))
    response = run_one(spec, request("Qwen/Qwen3-8B"))
    assert response.text == "from vllm"
    assert server.requests[0].headers["authorization"] == "Bearer EMPTY"
    assert server.requests[0].path == "/v1/chat/completions"


def test_openai_key_from_default_env(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-default-env")
    spec = GeneratorSpec(provider="openai", model="gpt-test", base_url=server.openai_base_url, **FAST)
    run_one(spec)
    assert server.requests[0].headers["authorization"] == "Bearer sk-from-default-env"


def test_openai_max_completion_tokens_option(server):
    spec = spec_for("openai", server, options={"max_tokens_param": "max_completion_tokens",
                                               "extra_body": {"top_k": 20}})
    run_one(spec, request("gpt-test", max_tokens=99))
    body = server.bodies("openai")[0]
    assert body["max_completion_tokens"] == 99 and "max_tokens" not in body and body["top_k"] == 20


@pytest.mark.parametrize("provider,env", [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")])
def test_missing_key_without_base_url_is_fatal(monkeypatch, provider, env):
    monkeypatch.delenv(env, raising=False)
    spec = GeneratorSpec(provider=provider, model="m")
    with pytest.raises(Fatal, match=env):
        build(spec)


def test_resilient_passes_name_and_closes_inner(server):
    spec = spec_for("openai", server)

    async def go():
        inner = build(spec)
        gen = Resilient(inner, spec)
        assert gen.name == inner.name == "openai:gpt-test"
        await gen.close()
        return inner.client.is_closed()

    assert asyncio.run(go())


def test_sdks_are_not_imported_at_module_import():
    code = (
        "import sys\n"
        "import agentloop.generators.resilience, agentloop.generators.openai_api\n"
        "import agentloop.generators.anthropic_api, agentloop.generators.transformers_local\n"
        "heavy = [m for m in ('openai', 'anthropic', 'transformers', 'torch') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr


# -- transformers --------------------------------------------------------------------------------------


WORDS = ("system user assistant : you write triton kernels a kernel please add two vectors def return "
         "x y z the of and for in load store mask offsets block program id").split()


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")

    specials = ["<unk>", "<pad>", "<eos>"]
    vocab = {token: i for i, token in enumerate(specials + WORDS)}
    core = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="<unk>", pad_token="<pad>", eos_token="<eos>")
    config = transformers.GPT2Config(
        vocab_size=len(vocab), n_positions=256, n_embd=32, n_layer=2, n_head=2,
        bos_token_id=vocab["<eos>"], eos_token_id=vocab["<eos>"], pad_token_id=vocab["<pad>"])
    import torch

    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(config)
    out = tmp_path_factory.mktemp("tiny-gpt2")
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def transformers_spec(path, **options) -> GeneratorSpec:
    return GeneratorSpec(provider="transformers", model=str(path),
                         options={"device": "cpu", "local_files_only": True, **options}, **FAST)


def test_transformers_generates_and_counts_tokens(tiny_model_dir):
    from agentloop.generators.transformers_local import TransformersGenerator

    spec = transformers_spec(tiny_model_dir)
    req = Request(model=str(tiny_model_dir), max_tokens=6, temperature=0.0, messages=(
        Message("system", "you write triton kernels"), Message("user", "please add two vectors")))

    async def go():
        gen = Resilient(TransformersGenerator(spec), spec)
        try:
            return await gen.generate(req), await gen.generate(req), gen.inner
        finally:
            await gen.close()

    first, second, inner = asyncio.run(go())
    # No chat template in this tokenizer: the plain "role: content" join, ending "assistant:".
    prompt = "system : you write triton kernels user : please add two vectors assistant :".split()
    assert first.tokens_in == len(prompt)
    assert 1 <= first.tokens_out <= 6
    assert first.finish_reason in ("stop", "length")
    assert (first.finish_reason == "length") == (first.tokens_out == 6)
    assert isinstance(first.text, str) and first.attempts == 1 and first.latency_s > 0
    assert first.extra["do_sample"] is False
    assert (second.text, second.tokens_out) == (first.text, first.tokens_out)  # greedy is deterministic
    assert inner.model is None  # close() released the weights


def test_transformers_uses_the_chat_template_when_present(tiny_model_dir, tmp_path):
    import shutil

    from agentloop.generators.transformers_local import TransformersGenerator

    templated = tmp_path / "templated"
    shutil.copytree(tiny_model_dir, templated)
    transformers = pytest.importorskip("transformers")
    tokenizer = transformers.AutoTokenizer.from_pretrained(templated, local_files_only=True)
    tokenizer.chat_template = (
        "{% for m in messages %}{{ m['role'] }} : {{ m['content'] }} {% endfor %}"
        "{% if add_generation_prompt %}assistant :{% endif %}")
    tokenizer.save_pretrained(templated)

    gen = TransformersGenerator(transformers_spec(templated))
    asyncio.run(gen.load())
    messages = (Message("user", "add two vectors"),)
    assert gen.prompt_text(messages) == "user : add two vectors assistant :"
    response = asyncio.run(gen.generate(Request(model="t", max_tokens=2, temperature=0.0, messages=messages)))
    assert response.tokens_in == 7


def test_transformers_runs_one_generation_at_a_time(tiny_model_dir):
    from agentloop.generators.transformers_local import TransformersGenerator

    spec = transformers_spec(tiny_model_dir, do_sample=True, seed=1)
    gen = TransformersGenerator(spec)
    asyncio.run(gen.load())
    real_generate = gen.model.generate
    state = {"now": 0, "most": 0}

    def watched(*args, **kwargs):
        state["now"] += 1
        state["most"] = max(state["most"], state["now"])
        time.sleep(0.05)
        try:
            return real_generate(*args, **kwargs)
        finally:
            state["now"] -= 1

    gen.model.generate = watched

    async def go():
        reqs = [Request(model="t", max_tokens=3, temperature=1.0, sample=i,
                        messages=(Message("user", "add two vectors"),)) for i in range(4)]
        return await asyncio.gather(*(gen.generate(r) for r in reqs))

    responses = asyncio.run(go())
    assert len(responses) == 4 and all(r.extra["do_sample"] for r in responses)
    assert state["most"] == 1


def test_transformers_bad_path_is_fatal(tmp_path):
    pytest.importorskip("transformers")
    from agentloop.generators.transformers_local import TransformersGenerator

    gen = TransformersGenerator(transformers_spec(tmp_path / "nothing-here"))
    with pytest.raises(Fatal, match="could not load"):
        asyncio.run(gen.generate(Request(model="x", messages=(Message("user", "hi"),))))
