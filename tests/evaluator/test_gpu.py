"""On a CUDA GPU: timing, calibration, CUDA faults, and the exploits that only timing can see.

Run on an H100/H200 with `pytest -m gpu`; skipped without a GPU.
"""

import gc
import json
import textwrap

import pytest
import torch

from evaluator.cases import plan, timing_cases
from evaluator.evaluate import Evaluator, EvaluatorConfig
from evaluator.loader import FOUNDATION_TASKS, find_task
from evaluator.probes import PROBES
from evaluator.roofline import IMPOSSIBLE_FACTOR

pytestmark = pytest.mark.gpu

GELU_KERNEL = '''
import torch
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, TANH: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    if TANH:
        y = 0.5 * x * (2.0 * tl.sigmoid(1.5957691216057308 * (x + 0.044715 * x * x * x)))
    else:
        y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


def launch(x, y, approximate="none"):
    gelu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), TANH=approximate == "tanh", BLOCK=1024)
'''


def gelu_candidate(body: str, header: str = "") -> str:
    return textwrap.dedent(header) + GELU_KERNEL + "\n\ndef gelu(input, approximate='none'):\n" + \
        textwrap.indent(textwrap.dedent(body), "    ")


@pytest.fixture(scope="module")
def gpu(tmp_path_factory):
    with Evaluator(EvaluatorConfig(device="cuda", cache_dir=tmp_path_factory.mktemp("cache"))) as evaluator:
        yield evaluator


@pytest.fixture(scope="module")
def gpu_unchecked(tmp_path_factory):
    config = EvaluatorConfig(device="cuda", cache_dir=tmp_path_factory.mktemp("cache"), static_checks=False)
    with Evaluator(config) as evaluator:
        yield evaluator


@pytest.fixture(scope="module")
def gelu_task(suite):
    return find_task("Activation/gelu", suite)


@pytest.fixture(scope="module")
def honest(gpu, gelu_task):
    result = gpu.evaluate(gelu_task, gelu_candidate("y = torch.empty_like(input)\nlaunch(input, y, approximate)\nreturn y"))
    assert result.correct, result.reason
    return result


@pytest.mark.parametrize("task_id", FOUNDATION_TASKS)
def test_reference_solutions_are_correct_and_timed(gpu, suite, task_id):
    """One task per category (the whole suite on a GPU is benchmarks/reference_solutions.py)."""
    task = suite[task_id]
    result = gpu.evaluate(task, task.solution_path.read_text())
    assert result.verdict.value == "CORRECT", f"{task.id}: {result.reason}"
    perf = result.performance
    assert perf is not None and perf.candidate.median_ms > 0 and perf.eager.median_ms > 0
    assert perf.speedup == pytest.approx(perf.eager.median_ms / perf.candidate.median_ms)
    assert 0 < perf.roofline_fraction <= IMPOSSIBLE_FACTOR and perf.iou > 0
    assert any(k.registers for k in result.kernels), "compile metadata is recorded on the GPU"
    assert result.environment.gpu and not result.environment.interpreter
    assert 0 <= result.phases["timing_lock_wait"] <= result.phases["timing"]
    waits = result.phases["references_lock_wait"] + result.phases["references_slot_wait"]
    assert 0 <= waits <= result.phases["references"]


def test_calibration_is_plausible_and_cached(gpu):
    peaks = gpu.calibrated_peaks()
    assert 300 < peaks.copy_gbps < 20000
    assert peaks.tflops["bfloat16"] > 50 and peaks.tflops["tf32"] > peaks.tflops["float32"] * 0.9
    assert gpu.calibrated_peaks() is peaks


def test_timing_is_stable_for_a_long_kernel(gpu, suite):
    task = find_task("MatrixMultiply/matmul", suite)
    medians = [gpu.evaluate(task, task.solution_path.read_text()).performance.candidate.median_ms for _ in range(3)]
    spread = (max(medians) - min(medians)) / min(medians)
    assert spread < 0.03, medians


def test_cuda_fault_is_a_memory_fail_located_by_memcheck_and_the_next_candidate_is_clean(gpu, gelu_task, honest):
    faulty = gelu_candidate("y = torch.empty_like(input)\nwild[(64,)](y, 1 << 40)\nreturn y", header='''
        import triton
        import triton.language as tl

        @triton.jit
        def wild(y_ptr, far):
            offsets = tl.program_id(0).to(tl.int64) * far + tl.arange(0, 128)
            tl.store(y_ptr + offsets, tl.zeros([128], dtype=tl.float32))
    ''')
    result = gpu.evaluate(gelu_task, faulty)
    assert result.verdict.value == "MEMORY_FAIL", result.reason
    assert "kernel `wild` wrote" in result.reason and "line 8" in result.reason, result.reason
    assert result.memory_check == "memcheck" and "Invalid __global__ write" in result.traceback
    assert gpu.evaluate(gelu_task, gelu_candidate("y = torch.empty_like(input)\nlaunch(input, y, approximate)\nreturn y")).correct


def test_gpu_out_of_memory_is_a_runtime_fail(gpu, gelu_task):
    result = gpu.evaluate(gelu_task, gelu_candidate(
        "y = torch.empty(1 << 40, dtype=torch.uint8, device=input.device)\nlaunch(input, y, approximate)\nreturn y"))
    assert result.verdict.value == "RUNTIME_FAIL" and "GPU memory" in result.reason, result.reason


def test_side_stream_work_is_counted(gpu_unchecked, gelu_task, honest):
    result = gpu_unchecked.evaluate(gelu_task, gelu_candidate('''
        y = torch.empty_like(input)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(8):
                launch(input, y, approximate)
        return y
    '''))
    assert result.correct, result.reason
    assert result.performance.timing_method == "wall"
    assert result.performance.candidate.median_ms > 4 * honest.performance.candidate.median_ms


def test_patched_cuda_events_do_not_shorten_the_time(gpu_unchecked, gelu_task, honest):
    result = gpu_unchecked.evaluate(gelu_task, gelu_candidate('''
        y = torch.empty_like(input)
        launch(input, y, approximate)
        return y
    ''', header='''
        import torch
        torch.cuda.Event.elapsed_time = lambda self, other: 1e-6
        torch.cuda.Event.record = lambda self, stream=None: None
    '''))
    assert result.verdict.value in ("CORRECT", "CONTRACT_FAIL"), result.reason
    if result.correct:
        assert result.performance.candidate.median_ms > 0.5 * honest.performance.candidate.median_ms


def test_results_memoised_by_content_are_physically_impossible(gpu, gelu_task):
    """Memoise outputs by a checksum of the input: the memoised tensor is poisoned after each timed
    call, and even unpoisoned, reading the input alone is faster than the roofline floor allows."""
    result = gpu.evaluate(gelu_task, gelu_candidate('''
        total = torch.zeros(1, dtype=torch.int32, device=input.device)
        checksum[(triton.cdiv(input.numel(), 4096),)](input, total, input.numel(), BLOCK=4096)
        key = (tuple(input.shape), input.dtype, approximate, total.item())
        if key not in MEMO:
            y = torch.empty_like(input)
            launch(input, y, approximate)
            MEMO[key] = y
        return MEMO[key]
    ''', header='''
        import triton
        import triton.language as tl

        MEMO = {}

        @triton.jit
        def checksum(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
            offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0).to(tl.float32).to(tl.int32, bitcast=True)
            tl.atomic_add(total_ptr, tl.sum(x * (offsets % 7 + 1).to(tl.int32), axis=0))
    '''))
    assert result.verdict.value == "CONTRACT_FAIL", result.reason
    assert "below the physical floor" in result.reason or "timed call returned wrong results" in result.reason


def test_time_below_the_roofline_floor_is_rejected(tmp_path, gelu_task):
    """With ceilings set far below this GPU's, an honest kernel looks faster than physics allows."""
    from evaluator.calibration import Peaks
    with Evaluator(EvaluatorConfig(device="cuda", cache_dir=tmp_path)) as evaluator:
        evaluator._peaks = Peaks(device="fake", copy_gbps=1.0, tflops={"float32": 0.001, "tf32": 0.001})
        result = evaluator.evaluate(gelu_task, gelu_task.solution_path.read_text())
    assert result.verdict.value == "CONTRACT_FAIL" and "below the physical floor" in result.reason


def test_cheating_once_correctness_is_over_is_caught(gpu, gelu_task):
    checked_calls = 2 * len(plan(gelu_task, on_gpu=True))
    result = gpu.evaluate(gelu_task, gelu_candidate(f'''
        CALLS[0] += 1
        y = torch.empty_like(input)
        if CALLS[0] <= {checked_calls}:
            launch(input, y, approximate)
        else:
            launch(input[:16], y[:16], approximate)
        return y
    ''', header="CALLS = [0]\n"))
    assert result.verdict.value == "CONTRACT_FAIL", result.reason
    assert "timed call returned wrong results" in result.reason


def test_replaying_results_by_pointer_is_caught(gpu, gelu_task):
    result = gpu.evaluate(gelu_task, gelu_candidate('''
        key = (input.data_ptr(), tuple(input.shape))
        y = torch.empty_like(input)
        if key not in SEEN:
            launch(input, y, approximate)
            SEEN[key] = y
            return y
        tiny = torch.empty(16, device=input.device)
        launch(tiny, tiny, approximate)
        return SEEN[key]
    ''', header="SEEN = {}\n"))
    assert result.verdict.value in ("CONTRACT_FAIL", "INCORRECT"), result.reason


def test_profile_reports_nsight_metrics_when_ncu_is_present(tmp_path, gelu_task):
    from evaluator.profiler import ncu_path
    if ncu_path() is None:
        pytest.skip("Nsight Compute (ncu) is not installed")
    config = EvaluatorConfig(device="cuda", cache_dir=tmp_path, profile=True)
    with Evaluator(config) as evaluator:
        result = evaluator.evaluate(gelu_task, gelu_task.solution_path.read_text())
    assert result.correct and result.profile, result.profile
    assert 0 < result.profile["dram_throughput_pct"] <= 100



def _leaves(value) -> list[torch.Tensor]:
    from evaluator.contracts import flatten
    from evaluator.task import Inputs
    if isinstance(value, Inputs):
        value = [list(value.args), list(value.kwargs.values())]
    return [t for t in flatten(value) if isinstance(t, torch.Tensor)]


def test_large_expected_outputs_stay_on_the_gpu_within_their_budget(tmp_path, gelu_task):
    from evaluator.references import ReferenceStore

    standard = plan(gelu_task, on_gpu=True)[0]
    for name in ("roomy", "full"):
        (tmp_path / name).mkdir()
    store = ReferenceStore(tmp_path / "roomy", torch.device("cuda"))
    kept = store.get(gelu_task, standard)
    assert kept.resident and store.device_bytes() == kept.expected_bytes > 0
    assert store.nbytes() == kept.nbytes > 0, "the inputs stay on the host (candidates read their file)"
    full = ReferenceStore(tmp_path / "full", torch.device("cuda"), max_device_bytes=1)
    on_host = full.get(gelu_task, standard)
    assert not on_host.resident and full.device_bytes() == 0
    assert torch.equal(on_host.expected.lo, kept.expected.lo.cpu())
    assert torch.equal(on_host.expected.hi, kept.expected.hi.cpu())


@pytest.mark.parametrize("task_id", ["Activation/gelu", "Optimizer/AdamW", "Index/scatter"])
def test_standard_inputs_drawn_on_the_gpu_are_the_ones_candidates_get(tmp_path, suite, task_id):
    from evaluator import wire
    from evaluator.references import ReferenceStore, run_reference
    from evaluator.task import on_device

    task, host = suite[task_id], torch.device("cpu")
    store = ReferenceStore(tmp_path, torch.device("cuda"))
    standard, small = plan(task, on_gpu=True)[0], next(c for c in plan(task, on_gpu=True) if c.size == "small")
    assert standard.size == "standard"
    data = store.get(task, standard)
    from_file = wire.load(data.inputs_file)
    assert all(t.device == host for t in _leaves(from_file))
    again = on_device(run_reference(task, from_file, torch.device("cuda")), host)
    assert all(torch.equal(want, got) for want, got in zip(_leaves(data.expected_on(host).lo), _leaves(again)))
    # small cases are still drawn on the CPU: the same numbers on every machine
    on_cpu = task.make_inputs(small.seed, small.size, small.mode, small.dtype)
    assert all(torch.equal(a, b) for a, b in zip(_leaves(on_cpu), _leaves(store.get(task, small).inputs)))


SCOUTED_KERNEL = '''
import json
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

from evaluator.compile_markers import CompileMarkers
from evaluator.compile_scout import Scout, gpu_target


@triton.jit
def fill_kernel(y_ptr, n, VALUE: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, VALUE, mask=offsets < n)


scouting, board = sys.argv[1] == "scout", Path(sys.argv[2])
scout = Scout(4, CompileMarkers(board)) if scouting else None
if scout is not None:
    assert scout.install(gpu_target(torch.device("cuda:0")))
y = torch.zeros(4096, device="cuda")
for value in (1, 2, 3, 1):
    fill_kernel[(4,)](y, y.numel(), VALUE=value, BLOCK=1024)
compiled, failed = scout.finish() if scout is not None else (0, 0)
torch.cuda.synchronize()
print(json.dumps({"compiled": compiled, "failed": failed, "values": sorted(set(y.tolist())),
                  "markers": len(list(board.iterdir()))}))
'''


def test_the_compile_scout_compiles_without_launching_and_the_candidate_loads_its_kernels(tmp_path):
    import json
    import os
    import subprocess
    import sys

    from evaluator.fork_server import PROJECT_ROOT

    script, cache, board = tmp_path / "scouted.py", tmp_path / "triton", tmp_path / "board"
    script.write_text(SCOUTED_KERNEL)
    board.mkdir()
    env = {**os.environ, "TRITON_CACHE_DIR": str(cache), "PYTHONPATH": str(PROJECT_ROOT)}
    env.pop("TRITON_INTERPRET", None)

    def run(mode: str) -> dict:
        done = subprocess.run([sys.executable, str(script), mode, str(board)], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    scouted = run("scout")
    assert scouted == {"compiled": 3, "failed": 0, "values": [0.0], "markers": 0}, scouted
    cubins = sorted(p.name for p in cache.rglob("*.cubin"))
    assert len(cubins) == 3
    ran = run("run")
    assert ran["values"] == [1.0], "the real run launches the scouted kernels"
    assert sorted(p.name for p in cache.rglob("*.cubin")) == cubins, "nothing compiled again"


def test_baselines_asked_for_together_share_one_process_and_one_exclusive_hold(tmp_path, suite, monkeypatch):
    """Three tasks' eager baselines asked for while the baseline process starts: one CUDA context
    and one exclusive hold of the GPU for all three."""
    log = tmp_path / "locks.jsonl"
    monkeypatch.setenv("AGENTLOOP_LOCK_LOG", str(log))  # before the fork server starts: its children inherit it
    tasks = [suite[i] for i in ("Activation/gelu", "Reduce/sum", "Math/softmax")]
    with Evaluator(EvaluatorConfig(device="cuda", cache_dir=tmp_path / "cache")) as evaluator:
        files = {t.id: [evaluator.references.get(t, case).inputs_file for case in timing_cases(t)] for t in tasks}
        measurements = [evaluator.baseline_server.measure(t, files[t.id], {}, False) for t in tasks]
        results = [m.result() for m in measurements]
    assert all(r["eager"].median_ms > 0 and r["eager"].reps >= 5 for r in results)
    holds = [json.loads(line) for line in log.read_text().splitlines()]
    timed = [h for h in holds if h["what"] == "baseline timing"]
    assert len(timed) == 1 and timed[0]["mode"] == "exclusive"
    assert len({h["pid"] for h in holds if h["what"].startswith("baseline")}) == 1


def test_identical_runs_and_timed_results_are_judged_once(tmp_path, gelu_task, monkeypatch):
    """A deterministic candidate: each case's second run is bit for bit its first, and the timed
    calls return what passed before, so each case is judged once, on one run, and timing adds only
    the probe calls."""
    with Evaluator(EvaluatorConfig(device="cuda", cache_dir=tmp_path)) as evaluator:
        runs_judged = []
        judge = evaluator.judge.judge
        monkeypatch.setattr(evaluator.judge, "judge", lambda task, data, runs: runs_judged.append(len(runs)) or
                            judge(task, data, runs))
        result = evaluator.evaluate(gelu_task, gelu_task.solution_path.read_text())
        assert result.correct and result.performance is not None, result.reason
        # every case once, and the probe calls' outputs (inputs never seen before) once each
        assert runs_judged == [1] * (len(plan(gelu_task, on_gpu=True)) + PROBES)
        gc.collect()
        assert evaluator.judge.kept_outputs.held == 0, "the kept copies went with their evaluation"


def test_large_outputs_reach_the_host_through_page_locked_memory():
    from evaluator.sandboxed.candidate_process import PINNED_MIN_BYTES, to_host
    big = torch.randn(1024, PINNED_MIN_BYTES // 4096 * 2, device="cuda").t()  # 2 MiB, transposed
    small = torch.arange(10, device="cuda")
    out = to_host((big, {"small": small}, 3))
    assert out[0].device.type == "cpu" and out[0].is_pinned() and out[0].stride() == big.stride()
    assert torch.equal(out[0], big.cpu()) and not out[1]["small"].is_pinned() and out[2] == 3


def test_a_candidate_sees_its_own_gpu_alone_as_device_0(tmp_path, gelu_task):
    """On a host of several GPUs the candidate of the last one is given that GPU's node only: CUDA
    finds one device, and the other GPUs (another evaluation's timing) are out of its reach."""
    from evaluator import gpu_node

    last = torch.cuda.device_count() - 1
    own = gpu_node.device_node(last)
    assert own is not None, "NVML names the GPU's device node"
    probe = gelu_candidate('''
        import glob, os
        nodes = sorted(p for p in glob.glob("/dev/nvidia*") if p[len("/dev/nvidia"):].isdigit())
        raise RuntimeError(f"nodes {nodes} count {torch.cuda.device_count()} on {input.device}")''')
    config = EvaluatorConfig(device=f"cuda:{last}", cache_dir=tmp_path, static_checks=False, timing=False)
    with Evaluator(config) as evaluator:
        result = evaluator.evaluate(gelu_task, probe)
    assert f"nodes ['{own}'] count 1 on cuda:0" in result.reason, result.reason


def test_a_device_that_cannot_be_set_up_is_the_machines_error_not_a_verdict(tmp_path, gelu_task, caplog):
    """The candidate's process sets its device up before its module runs; when that fails (here a
    memory share torch refuses), no candidate code has run: the evaluation is tried once more, then
    raised, never scored."""
    from evaluator.sandbox import DeviceUnavailable

    with Evaluator(EvaluatorConfig(device="cuda", cache_dir=tmp_path, gpu_memory_fraction=1.5)) as evaluator:
        with pytest.raises(DeviceUnavailable, match="could not be set up in a confined process"):
            evaluator.evaluate(gelu_task, gelu_task.solution_path.read_text())
    assert "evaluating it once more" in caplog.text
