"""The simulated generator: a model whose behaviour is known, so offline A/B tests have a ground
truth; and the power estimate that says how many chains an experiment needs."""

import asyncio

import pytest
from scipy.stats import binomtest

from agentloop.extract import extract_code
from agentloop.generators import build
from agentloop.generators.base import Fatal, GeneratorSpec, Message, Request
from agentloop.generators.simulated import BROKEN_LINE, SIGNAL_MARKERS, SimulatedGenerator, broken
from agentloop.prompts import environment, prompts_root
from evaluator.loader import find_task, load_suite
from traces.ab import chains_for_power


def simulator(**options) -> SimulatedGenerator:
    return build(GeneratorSpec(provider="simulated", model="sim", options=options))


def answer(generator, prompt: str, round_: int, sample: int, task: str = "Activation/gelu") -> str:
    request = Request(model="sim", messages=(Message("user", prompt),), task_id=task, arm="A", sample=sample,
                      round=round_)
    return asyncio.run(generator.generate(request)).text


def test_every_feedback_section_carries_the_marker_the_simulator_looks_for():
    env = environment(str(prompts_root()))
    for signal, marker in SIGNAL_MARKERS.items():
        source = env.loader.get_source(env, f"feedback/{signal}.j2")[0]
        assert source.lstrip().startswith(marker), f"feedback/{signal}.j2 no longer starts with {marker!r}"


def test_the_probability_of_a_correct_answer_follows_the_prompt():
    sim = simulator(p_initial=0.3, p_keep=0.9, p_repair=0.1, effects={"compile_errors": 0.5, "correctness": 0.2})
    assert sim.p_correct("Write gelu.", 0) == pytest.approx(0.3)
    assert sim.p_correct("Your previous module (round 0) got the verdict CORRECT.", 1) == pytest.approx(0.9)
    repair = "Your previous module (round 0) got the verdict COMPILE_FAIL."
    assert sim.p_correct(repair, 1) == pytest.approx(0.1)
    assert sim.p_correct(repair + "\nError (COMPILE_FAIL, at the call stage): x", 1) == pytest.approx(0.6)
    both = repair + "\nError (COMPILE_FAIL, at the call stage): x\nWrong results: y"
    assert sim.p_correct(both, 2) == pytest.approx(0.8)


def test_answers_are_drawn_with_those_probabilities_and_repeat_on_resume():
    """2000 repair answers with the compile-error section: the share of correct ones is what the
    settings say (a binomial test at 1e-4), and the same request gets the same answer again."""
    sim = simulator(p_repair=0.1, effects={"compile_errors": 0.5})
    solution = find_task("Activation/gelu", load_suite()).solution_path.read_text()
    prompt = "Your previous module (round 0) got the verdict COMPILE_FAIL.\nError (COMPILE_FAIL): arange"
    correct = sum(answer(sim, prompt, 1, sample).count(BROKEN_LINE) == 0 for sample in range(2000))
    assert binomtest(correct, 2000, 0.6).pvalue > 1e-4
    without = sum(answer(sim, prompt.split("\n")[0], 1, sample).count(BROKEN_LINE) == 0 for sample in range(2000))
    assert binomtest(without, 2000, 0.1).pvalue > 1e-4
    assert answer(sim, prompt, 1, 7) == answer(simulator(p_repair=0.1, effects={"compile_errors": 0.5}), prompt, 1, 7)
    codes = {extract_code(answer(sim, "Write gelu.", 0, sample), "gelu") for sample in range(40)}
    assert {c.rstrip("\n") for c in codes} == {solution.rstrip("\n"), broken(solution).rstrip("\n")}, "one or the other"


def test_a_broken_answer_is_refused_by_triton_and_the_correct_one_passes(cpu_evaluator):
    task = find_task("Activation/gelu", load_suite())
    bad = cpu_evaluator.evaluate(task, broken(task.solution_path.read_text()))
    assert bad.verdict.value == "COMPILE_FAIL", bad.reason


@pytest.mark.parametrize("options, message", [
    ({"p_repiar": 0.2}, "unknown option 'p_repiar'"),
    ({"effects": {"vibes": 0.2}}, "unknown feedback signal 'vibes'"),
])
def test_bad_simulator_options_are_refused(options, message):
    with pytest.raises(Fatal, match=message):
        simulator(**options)


def test_the_power_estimate_matches_the_textbook_sample_size():
    assert chains_for_power(0.5, 0.6) in range(380, 395)  # about 385 per group for h = 0.20
    assert chains_for_power(0.3, 0.3) is None
    assert chains_for_power(0.1, 0.9) < chains_for_power(0.4, 0.6)
