"""Triton's C launchers built by the evaluator from the signatures candidates' processes report
(evaluator/triton_launchers.py): what is refused, what is built once, and that a candidate's process
finds what was built where Triton looks for it."""

import pytest

from evaluator import triton_cache, triton_launchers
from evaluator.triton_launchers import LauncherBuilder, valid
from tests.evaluator.test_gpu import gelu_task, gpu, honest  # noqa: F401 - fixtures

GELU = ("*fp32", "*fp32", "i32", "constexpr", "constexpr")
per_signature = pytest.mark.skipif(triton_launchers.launcher_maker() is None,
                                   reason="this Triton has one launcher for every kernel")


@pytest.mark.parametrize("signature", [GELU, ("*bf16", "fp32", "i64", "u8", "*i1"), ("constexpr",)])
def test_triton_scalar_pointer_and_constant_types_are_valid(signature):
    assert valid(signature)


@pytest.mark.parametrize("signature", [
    (), ("i32",) * (triton_launchers.MAX_ARGUMENTS + 1), ("*fp32", ("i32", "i32")), ("nvTmaDesc",),
    ("tensordesc<fp16[64, 64]>",), ("i32); system(\"id\"); (void)(0",), ("*fp32 x",), ("fp32\n",), (3,),
])
def test_anything_else_is_refused(signature):
    assert not valid(signature)


def test_each_valid_signature_is_built_once_and_a_report_is_capped(monkeypatch, tmp_path):
    built = []
    monkeypatch.setattr(triton_launchers, "launcher_maker", lambda: object())
    monkeypatch.setattr(triton_launchers, "build", lambda stubs, signature: built.append((stubs, signature)))
    builder = LauncherBuilder(tmp_path)
    try:
        assert builder.request([GELU, GELU, ("nvTmaDesc",), ("*fp16", "i32")]) == 2
        assert builder.request([GELU, ("*fp16", "i32")]) == 0
        many = [("i32",) * n for n in range(1, 2 * triton_launchers.MAX_PER_REPORT)]
        assert builder.request(many) == triton_launchers.MAX_PER_REPORT
        builder.wait()
    finally:
        builder.close()
    assert built[:2] == [(tmp_path, GELU), (tmp_path, ("*fp16", "i32"))]
    assert len(built) == 2 + triton_launchers.MAX_PER_REPORT


def test_the_stubs_folder_holds_a_bounded_number_of_launchers_across_evaluators(monkeypatch, tmp_path):
    monkeypatch.setattr(triton_launchers, "launcher_maker", lambda: object())
    monkeypatch.setattr(triton_launchers, "build", lambda stubs, signature: None)
    monkeypatch.setattr(triton_launchers, "MAX_LAUNCHERS", 5)
    for n in range(3):  # entries earlier evaluators left
        (tmp_path / f"key{n}").mkdir()
    builder = LauncherBuilder(tmp_path)
    try:
        assert builder.request([("i32",) * n for n in range(1, 6)]) == 2
        assert builder.request([("i64",)]) == 0
    finally:
        builder.close()


def test_without_stubs_or_a_launcher_per_signature_nothing_is_asked(monkeypatch, tmp_path):
    monkeypatch.setattr(triton_launchers, "launcher_maker", lambda: None)
    assert LauncherBuilder(tmp_path).request([GELU]) == 0
    monkeypatch.setattr(triton_launchers, "launcher_maker", lambda: object())
    assert LauncherBuilder(None).request([GELU]) == 0


def layered(monkeypatch, private, stubs) -> None:
    """This process's Triton cache as a candidate's process has it (put back after the test)."""
    for name in ("TRITON_CACHE_DIR", "TRITON_CACHE_MANAGER", triton_cache.STUBS_VARIABLE):
        monkeypatch.setenv(name, "")
    triton_cache.use_layers(str(private), str(stubs))


@per_signature
def test_the_launcher_is_built_where_the_candidates_triton_looks_for_it(monkeypatch, tmp_path):
    """Triton's own compile_module_from_src, in a process whose cache is a private folder over the
    stubs (the layered manager, as Triton's get_cache_manager makes it), finds the file `build`
    wrote; stopped there, before it loads it (that needs a GPU driver)."""
    from triton.backends.nvidia import driver
    from triton.runtime import build as triton_build

    stubs, private = tmp_path / "stubs", tmp_path / "private"
    target = triton_launchers.build(stubs, GELU)
    assert target.is_file() and target.stat().st_mode & 0o444 == 0o444
    found = []

    class Found(Exception):
        pass

    def get_file(manager, filename):
        found.append(lookup(manager, filename))
        raise Found

    lookup = triton_cache.LayeredCacheManager.get_file
    monkeypatch.setattr(triton_cache.LayeredCacheManager, "get_file", get_file)
    layered(monkeypatch, private, stubs)
    with pytest.raises(Found):
        triton_build.compile_module_from_src(src=driver.make_launcher({}, dict(enumerate(GELU)), None),
                                             name=triton_launchers.NAME, library_dirs=driver.library_dirs(),
                                             include_dirs=driver.include_dirs, libraries=driver.libraries)
    assert found == [str(target)]
    assert triton_launchers.build(stubs, GELU) == target  # there already: not built again


@per_signature
@pytest.mark.gpu
def test_a_candidates_process_loads_the_built_launcher_instead_of_building_one(monkeypatch, tmp_path):
    from triton.backends.nvidia import driver
    from triton.runtime.build import compile_module_from_src

    stubs, private = tmp_path / "stubs", tmp_path / "private"
    private.mkdir()
    triton_launchers.build(stubs, GELU)
    layered(monkeypatch, private, stubs)
    module = compile_module_from_src(src=driver.make_launcher({}, dict(enumerate(GELU)), None),
                                     name=triton_launchers.NAME, library_dirs=driver.library_dirs(),
                                     include_dirs=driver.include_dirs, libraries=driver.libraries)
    assert hasattr(module, "launch")
    assert [f for f in private.rglob("*") if f.is_file()] == [], "nothing built in the private cache"


@per_signature
@pytest.mark.gpu
def test_an_evaluation_leaves_its_kernels_launcher_for_the_next_ones(gpu, honest):
    """The gelu kernel (two pointers, the length, two compile-time constants) of an evaluation
    that passed: its launcher is in the evaluator's stubs once the builder is idle."""
    gpu.launchers.wait()
    _, target = triton_launchers.launcher_path(gpu.launchers.stubs, GELU)
    assert target.is_file()


FORGED_REPORT = '''
import gc
from evaluator.sandboxed.guards import LaunchRecorder

for _found in gc.get_objects():
    if isinstance(_found, LaunchRecorder):
        _found.launchers.update({("i32); system(\\"id\\"); (void)(0",), ("*fp32", "i32"), ("i32",) * 500,
                                 ("nvTmaDesc", "i32")})
'''


def test_a_candidate_that_forges_its_launcher_report_gets_only_valid_signatures_built(monkeypatch, tmp_path, suite):
    """Static checks off, the candidate adds signatures of its own to its process's report (the
    report travels in its process's CasesDone): the evaluator builds only the valid one."""
    from evaluator.evaluate import Evaluator, EvaluatorConfig

    built = []
    monkeypatch.setattr(triton_launchers, "launcher_maker", lambda: object())
    monkeypatch.setattr(triton_launchers, "build", lambda stubs, signature: built.append(signature))
    task = suite["Activation/gelu"]
    config = EvaluatorConfig(device="cpu", static_checks=False, cache_dir=tmp_path / "cache")
    with Evaluator(config) as evaluator:
        evaluator.launchers.close()
        evaluator.launchers = LauncherBuilder(tmp_path / "stubs")
        result = evaluator.evaluate(task, FORGED_REPORT + task.solution_path.read_text())
        evaluator.launchers.wait()
    assert result.correct, result.reason
    assert built == [("*fp32", "i32")]
