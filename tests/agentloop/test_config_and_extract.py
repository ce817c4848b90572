"""Experiment configuration, overrides and their errors; code extraction from model answers."""

import pytest

from agentloop.config import ConfigError, default_experiment, load_experiment
from agentloop.extract import extract_code


def write(tmp_path, text):
    path = tmp_path / "exp.yaml"
    path.write_text(text)
    return path


def test_yaml_config_with_overrides(tmp_path):
    path = write(tmp_path, """
name: ab
tasks: {categories: [Math], difficulty: [2]}
samples: 2
generator: {provider: openai-compatible, model: kernelllm, base_url: "http://localhost:8000/v1"}
arms:
  - {name: with_profiler, method: iterative}
  - {name: without_profiler, method: iterative, feedback: [compile_errors, correctness, outliers, history]}
budgets: {max_rounds: 4, target_speedup: 2}
""")
    experiment = load_experiment(path, ["budgets.max_rounds=6", "samples=3", "evaluation.device=cpu"])
    assert experiment.samples == 3 and experiment.budgets.max_rounds == 6 and experiment.budgets.target_speedup == 2.0
    assert experiment.arms[1].feedback == ["compile_errors", "correctness", "outliers", "history"]
    assert experiment.generator.base_url == "http://localhost:8000/v1"
    assert experiment.run_id.startswith("ab-")
    again = load_experiment(path, ["budgets.max_rounds=6", "samples=3", "evaluation.device=cpu", "evaluation.workers=9"])
    assert again.run_id == experiment.run_id, "concurrency settings do not change the run's identity"
    assert load_experiment(path, ["budgets.max_rounds=7"]).run_id != experiment.run_id


@pytest.mark.parametrize("text, overrides, message", [
    ("budget: {max_rounds: 3}\n", [], "unknown key 'budget'"),
    ("samples: two\n", [], "expected int"),
    ("arms: [{name: a, method: magic}]\n", [], "unknown method 'magic'"),
    ("arms: [{name: a, feedback: [vibes]}]\n", [], "unknown feedback signal 'vibes'"),
    ("arms: [{name: a}, {name: a}]\n", [], "distinct names"),
    ("samples: 0\n", [], "at least 1"),
    ("- just\n- a list\n", [], "must be a mapping"),
    ("name: [unclosed\n", [], "not valid YAML"),
    ("name: x\n", ["budgets.max_rounds"], "expected KEY=VALUE"),
])
def test_bad_configs_get_clear_errors(tmp_path, text, overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_experiment(write(tmp_path, text), overrides)


def test_default_is_the_bundled_replay_unless_a_key_is_set(monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AGENTLOOP_BASE_URL", "AGENTLOOP_MODEL"):
        monkeypatch.delenv(name, raising=False)
    experiment, what = default_experiment()
    assert experiment.generator.provider == "replay" and "This is a replay" in what
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    experiment, what = default_experiment()
    assert experiment.generator.provider == "anthropic" and "anthropic" in what
    monkeypatch.setenv("AGENTLOOP_BASE_URL", "http://127.0.0.1:9/v1")
    experiment, _ = default_experiment()
    assert experiment.generator.provider == "openai-compatible"
    assert experiment.generator.base_url == "http://127.0.0.1:9/v1"


SOLUTION = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n\ndef softmax(input, dim, dtype=None):\n    k[(1,)](input)\n"


@pytest.mark.parametrize("text", [
    f"Here you go:\n```python\n{SOLUTION}```\nThis should be fast.",
    f"The bug was here:\n```python\nx = tl.exp(x)\n```\nFixed version:\n```python\n{SOLUTION}```\n",
    f"```\n{SOLUTION}```",
    f"I will subtract the max first.\n\n{SOLUTION}",
    f"```python\n{SOLUTION}",  # the answer was cut off before the closing fence
    f"Full module:\n```py\n{SOLUTION}```\nAnd a test:\n```python\nprint(softmax(x, 0))\n```",
])
def test_extraction_copes_with_prose_blocks_and_missing_fences(text):
    assert extract_code(text, "softmax").strip() == SOLUTION.strip()


@pytest.mark.parametrize("text", ["", "   ", "I cannot help with that.", "```text\nno code\n```"])
def test_no_code_is_none(text):
    assert extract_code(text, "softmax") is None


def test_the_readme_example_experiment_loads(tmp_path):
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    example = readme.split("```yaml\n", 1)[1].split("```", 1)[0]
    experiment = load_experiment(write(tmp_path, example))
    assert [arm.name for arm in experiment.arms] == ["with_profiler", "without_profiler"]
    assert experiment.budgets.max_run_cost_usd == 20.0 and experiment.generator.price_out_per_mtok == 15.0
