"""Generators behind one protocol, built by provider name; SDKs are imported only when used."""

from __future__ import annotations

from agentloop.generators.base import Fatal, Generator, GeneratorSpec

PAID = {"anthropic", "openai", "openai-compatible", "vllm", "sglang", "transformers"}
PROVIDERS = sorted(PAID | {"replay", "scripted", "simulated"})


def build(spec: GeneratorSpec, store=None) -> Generator:
    """The generator for `spec`, with retries and concurrency limits for real models, and the
    response cache (in `store`) for every model call that costs money or time."""
    provider = spec.provider
    if provider == "replay":
        from agentloop.generators.replay import ReplayGenerator
        return ReplayGenerator(spec)
    if provider == "scripted":
        from agentloop.generators.scripted import ScriptedGenerator
        return ScriptedGenerator(spec)
    if provider == "simulated":
        from agentloop.generators.simulated import SimulatedGenerator
        return SimulatedGenerator(spec)
    if provider in ("openai", "openai-compatible", "vllm", "sglang"):
        from agentloop.generators.openai_api import OpenAIGenerator
        inner = OpenAIGenerator(spec)
    elif provider == "anthropic":
        from agentloop.generators.anthropic_api import AnthropicGenerator
        inner = AnthropicGenerator(spec)
    elif provider == "transformers":
        from agentloop.generators.transformers_local import TransformersGenerator
        inner = TransformersGenerator(spec)
    else:
        raise Fatal(f"unknown generator provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
    from agentloop.generators.resilience import Resilient
    generator: Generator = Resilient(inner, spec)
    if store is not None:
        from agentloop.generators.cached import CachedGenerator
        generator = CachedGenerator(generator, store)
    return generator
