"""Experiment configuration: YAML in, typed dataclasses out, with clear errors and overrides."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from evaluator import plain_data
from evaluator.plain_data import PlainDataError
from agentloop.generators.base import GeneratorSpec
from agentloop.methods import ALL_SIGNALS, method_named

PACKAGE = Path(__file__).resolve().parent
DEMO_CONFIG = PACKAGE / "recordings" / "demo.yaml"
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-5"}


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the key and what was expected."""


@dataclass
class TaskSelection:
    ids: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    difficulty: list[int] = field(default_factory=list)


@dataclass
class Budgets:
    max_rounds: int | None = None  # None: the method's own
    target_speedup: float | None = None
    stagnation_rounds: int = 3
    max_tokens: int | None = None  # per chain
    max_cost_usd: float | None = None  # per chain
    wall_seconds: float | None = None  # per chain
    max_run_cost_usd: float | None = None  # the whole run


@dataclass
class Arm:
    name: str
    method: str = "iterative"
    feedback: list[str] | None = None  # None: the method's signals
    generator: GeneratorSpec | None = None  # None: the experiment's
    tune: bool | None = None  # None: the method's choice
    budgets: Budgets | None = None  # None: the experiment's


@dataclass
class Evaluation:
    device: str = "auto"
    workers: int = 0
    timing: bool = True
    compile_baseline: bool = False
    profile: bool = False
    memcheck: bool = True  # out-of-bounds accesses: Compute Sanitizer on a GPU, the interpreter's check on the CPU
    executor: str = "local"  # "local": every visible GPU of this machine; "ray": a Ray cluster's workers
    ray_address: str | None = None  # None: a new local Ray instance; "auto" or "ray://host:10001": a cluster


@dataclass
class Experiment:
    name: str = "agentloop"
    tasks: TaskSelection = field(default_factory=TaskSelection)
    samples: int = 1
    generator: GeneratorSpec = field(default_factory=lambda: GeneratorSpec(provider="replay", model="recorded-demo"))
    arms: list[Arm] = field(default_factory=lambda: [Arm("default")])
    budgets: Budgets = field(default_factory=Budgets)
    evaluation: Evaluation = field(default_factory=Evaluation)
    store: str = "runs/agentloop.db"
    max_concurrent_chains: int = 64

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def run_id(self) -> str:
        """Stable for the same experiment, so rerunning the same command resumes it."""
        identity = self.to_dict()
        for key in ("store", "max_concurrent_chains"):
            identity.pop(key)
        for where in ("workers", "executor", "ray_address"):  # results do not depend on where they ran
            identity["evaluation"].pop(where)
        digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:10]
        return f"{self.name}-{digest}"

    def generator_for(self, arm: Arm) -> GeneratorSpec:
        return arm.generator or self.generator


def _build(cls: Any, data: Any, where: str) -> Any:
    """Instantiate `cls` from plain data, checking every key and type."""
    try:
        return plain_data.build(cls, data, where, strict=True)
    except PlainDataError as exc:
        raise ConfigError(str(exc)) from None


def apply_override(data: dict[str, Any], assignment: str) -> None:
    """`budgets.max_rounds=3` (the value is read as YAML: numbers, booleans and lists work)."""
    if "=" not in assignment:
        raise ConfigError(f"override {assignment!r}: expected KEY=VALUE, e.g. budgets.max_rounds=3")
    key, raw = assignment.split("=", 1)
    parts = key.strip().split(".")
    target = data
    for part in parts[:-1]:
        target = target.setdefault(part, {})
        if not isinstance(target, dict):
            raise ConfigError(f"override {assignment!r}: {part!r} is not a section")
    target[parts[-1]] = yaml.safe_load(raw)


def read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {_yaml_problem(exc)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of settings")
    return data


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """PyYAML's complaint in one line, at the line and column where it was found."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if not problem:
        return " ".join(str(exc).split())
    return f"{problem} at line {mark.line + 1}, column {mark.column + 1}" if mark else problem


EXECUTORS = ("local", "ray")


# (key, lowest allowed value, whether the lowest value itself is allowed); None always means "no limit".
BUDGET_BOUNDS = (("max_rounds", 1, True), ("target_speedup", 0, False), ("stagnation_rounds", 0, True),
                 ("max_tokens", 1, True), ("max_cost_usd", 0, False), ("wall_seconds", 0, False),
                 ("max_run_cost_usd", 0, False))
GENERATOR_BOUNDS = (("max_concurrency", 1, True), ("timeout_s", 0, False), ("max_retries", 0, True),
                    ("retry_base_delay_s", 0, True), ("retry_max_delay_s", 0, True),
                    ("price_in_per_mtok", 0, True), ("price_out_per_mtok", 0, True))


def _check_bounds(obj: Any, bounds: tuple, where: str) -> None:
    for key, low, inclusive in bounds:
        value = getattr(obj, key)
        if value is None:
            continue
        if not (value >= low if inclusive else value > low) or (isinstance(value, float) and math.isnan(value)):
            relation = "at least" if inclusive else "more than"
            raise ConfigError(f"{where}.{key}: must be {relation} {low} (or null for no limit), got {value!r}")


def _check_generator(spec: GeneratorSpec, where: str) -> None:
    from agentloop.generators import PROVIDERS
    if spec.provider not in PROVIDERS:
        raise ConfigError(f"{where}.provider: unknown generator provider {spec.provider!r}; choose one of "
                          f"{', '.join(PROVIDERS)}")
    _check_bounds(spec, GENERATOR_BOUNDS, where)


def _check_counts(experiment: Experiment) -> None:
    if experiment.samples < 1:
        raise ConfigError("samples must be at least 1")
    if experiment.max_concurrent_chains < 1:
        raise ConfigError("max_concurrent_chains must be at least 1")
    if experiment.evaluation.workers < 0:
        raise ConfigError("evaluation.workers must be 0 (one per 2 CPU cores, at most 8) or more")


def _check_executor(evaluation: Evaluation) -> None:
    if evaluation.executor not in EXECUTORS:
        raise ConfigError(f"evaluation.executor: {evaluation.executor!r} is not one of {', '.join(EXECUTORS)}")


def _check_arm_names(arms: list[Arm]) -> None:
    names = [arm.name for arm in arms]
    if not names or len(set(names)) != len(names):
        raise ConfigError(f"arms need distinct names; got {names}")


def _check_arm(arm: Arm) -> None:
    try:
        method_named(arm.method)
    except ValueError as exc:
        raise ConfigError(f"arm {arm.name!r}: {exc}") from None
    if arm.budgets is not None:
        _check_bounds(arm.budgets, BUDGET_BOUNDS, f"arm {arm.name!r} budgets")
    if arm.generator is not None:
        _check_generator(arm.generator, f"arm {arm.name!r} generator")
    unknown = sorted(set(arm.feedback or []) - set(ALL_SIGNALS))
    if unknown:
        raise ConfigError(f"arm {arm.name!r}: unknown feedback signal {unknown[0]!r}; "
                          f"signals: {', '.join(ALL_SIGNALS)}")


def validate(experiment: Experiment) -> Experiment:
    _check_counts(experiment)
    _check_bounds(experiment.budgets, BUDGET_BOUNDS, "budgets")
    _check_generator(experiment.generator, "generator")
    _check_executor(experiment.evaluation)
    _check_arm_names(experiment.arms)
    for arm in experiment.arms:
        _check_arm(arm)
    return experiment


def load_experiment(path: Path | None, overrides: list[str] = ()) -> Experiment:
    data = read_yaml(path) if path else {}
    for assignment in overrides:
        apply_override(data, assignment)
    return validate(_build(Experiment, data, str(path) if path else "config"))


def default_experiment(overrides: list[str] = ()) -> tuple[Experiment, str]:
    """The embedded default: a real model when a key or base URL is set, else the bundled replay.
    Returns the experiment and a sentence saying which."""
    data = read_yaml(DEMO_CONFIG)
    from agentloop.generators.replay import bundled_recording
    data["generator"]["options"] = {"recording": bundled_recording("demo.jsonl")}
    provider = _provider_from_environment()
    if provider:
        data["name"] = f"default-{provider[0]}"
        data["generator"] = {"provider": provider[0], "model": provider[1]}
        if os.environ.get("AGENTLOOP_BASE_URL"):
            data["generator"]["base_url"] = os.environ["AGENTLOOP_BASE_URL"]
    for assignment in overrides:
        apply_override(data, assignment)
    experiment = validate(_build(Experiment, data, "default config"))
    spec = experiment.generator
    if spec.provider == "replay":
        what = ("This is a replay: no model is called. Responses come from a recording bundled with "
                "agentloop; set ANTHROPIC_API_KEY, OPENAI_API_KEY or AGENTLOOP_BASE_URL to use a real model.")
    else:
        what = f"Using {spec.provider} model {spec.model}" + (f" at {spec.base_url}" if spec.base_url else "") + "."
    return experiment, what


def _provider_from_environment() -> tuple[str, str] | None:
    model = os.environ.get("AGENTLOOP_MODEL")
    if os.environ.get("AGENTLOOP_BASE_URL"):
        return "openai-compatible", model or "default"
    if os.environ.get("ANTHROPIC_API_KEY"):
        return "anthropic", model or DEFAULT_MODELS["anthropic"]
    if os.environ.get("OPENAI_API_KEY"):
        return "openai", model or DEFAULT_MODELS["openai"]
    return None
