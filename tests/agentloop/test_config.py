"""Experiment configuration, overrides and their errors."""

from pathlib import Path

import pytest

from agentloop.config import ConfigError, default_experiment, load_experiment


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
    ("name: [unclosed\n", [], "at line 2, column 1"),
    ("name: x\n", ["budgets.max_rounds=0"], r"budgets.max_rounds: must be at least 1 \(or null for no limit\), got 0"),
    ("name: x\n", ["budgets.max_rounds=-2"], "budgets.max_rounds: must be at least 1"),
    ("name: x\n", ["budgets.target_speedup=0"], "budgets.target_speedup: must be more than 0"),
    ("name: x\n", ["budgets.stagnation_rounds=-1"], "budgets.stagnation_rounds: must be at least 0"),
    ("name: x\n", ["budgets.max_cost_usd=-5"], "budgets.max_cost_usd: must be more than 0"),
    ("name: x\n", ["budgets.wall_seconds=.nan"], "budgets.wall_seconds: must be more than 0"),
    ("arms: [{name: a, budgets: {max_tokens: 0}}]\n", [], "arm 'a' budgets.max_tokens: must be at least 1"),
    ("name: x\n", ["evaluation.workers=-3"], "evaluation.workers must be 0"),
    ("name: x\n", ["max_concurrent_chains=0"], "max_concurrent_chains must be at least 1"),
    ("generator: {provider: nosuch, model: m}\n", [], "unknown generator provider 'nosuch'; choose one of anthropic"),
    ("generator: {provider: openai, model: m}\n", ["generator.max_concurrency=0"],
     "generator.max_concurrency: must be at least 1"),
    ("generator: {provider: openai}\n", [], "generator: missing key 'model'"),
    ("arms: [{name: a, generator: {provider: nosuch, model: m}}]\n", [], "arm 'a' generator.provider"),
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


def test_budgets_of_null_mean_no_limit_and_max_rounds_is_taken_as_given(tmp_path):
    from agentloop.loop import Chain
    experiment = load_experiment(write(tmp_path, "name: x\n"), ["budgets.max_rounds=1", "budgets.stagnation_rounds=0"])
    assert experiment.budgets.max_rounds == 1 and experiment.budgets.stagnation_rounds == 0
    assert load_experiment(write(tmp_path, "name: x\n"), ["budgets.max_cost_usd=null"]).budgets.max_cost_usd is None
    assert "self.budgets.max_rounds or" not in Path(Chain.__init__.__code__.co_filename).read_text()


def test_the_default_run_id_names_the_bundled_recording_not_where_it_is_installed(monkeypatch, tmp_path):
    import shutil

    from agentloop.generators import replay
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AGENTLOOP_BASE_URL", "AGENTLOOP_MODEL"):
        monkeypatch.delenv(name, raising=False)
    experiment, _ = default_experiment()
    recording = experiment.generator.options["recording"]
    assert recording.startswith("bundled:demo.jsonl@") and str(replay.BUNDLED) not in str(experiment.to_dict())
    moved = tmp_path / "elsewhere" / "recordings"
    shutil.copytree(replay.BUNDLED, moved)
    monkeypatch.setattr(replay, "BUNDLED", moved)  # installed somewhere else: the same run
    assert default_experiment()[0].run_id == experiment.run_id
    assert replay.recording_path(recording) == moved / "demo.jsonl"
    with open(moved / "demo.jsonl", "a") as f:
        f.write("\n")  # a different recording: a different run
    assert default_experiment()[0].run_id != experiment.run_id
    with pytest.raises(replay.Fatal, match="is not the one this configuration names"):
        replay.recording_path(recording)


def test_the_readme_example_experiment_loads(tmp_path):
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    example = readme.split("```yaml\n", 1)[1].split("```", 1)[0]
    experiment = load_experiment(write(tmp_path, example))
    assert [arm.name for arm in experiment.arms] == ["with_profiler", "without_profiler"]
    assert experiment.budgets.max_run_cost_usd == 20.0 and experiment.generator.price_out_per_mtok == 15.0
    simulated = load_experiment(write(tmp_path, readme.split("```yaml\n")[2].split("```", 1)[0]))
    assert simulated.generator.provider == "simulated" and simulated.evaluation.device == "cpu"
