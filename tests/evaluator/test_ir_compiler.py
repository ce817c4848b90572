"""The evaluator's end of the IR store (evaluator/ir_compiler.py): an IR asked for twice compiled in
a confined child and answered after; what a scout or a child left in its folder read only as
regular files; and the scout's end of the line (compile_scout.EvaluatorLine)."""

import functools
import json
import os
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from evaluator import compile_scout, protocol
from evaluator.ir_compiler import IRCompiler, answer_scout
from evaluator.ir_store import STAGES, Compiled, IRStore, read_compiled
from evaluator.sandbox import Limits
from evaluator.sandboxed.channel import Channel
from tests.evaluator.test_gpu import gelu_task, gpu  # noqa: F401 - fixtures

TARGET = {"backend": "cuda", "arch": 90, "warp_size": 32}
KERNEL_IR = Path(__file__).parent / "ir_store_files" / "kernel_ir.py"


@functools.lru_cache(maxsize=1)
def kernel_ir() -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, str(KERNEL_IR)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def compiler(tmp_path):
    from evaluator.fork_server import ForkServer
    server = ForkServer(interpret=True)
    made = IRCompiler(IRStore(tmp_path / "store"), server, TARGET, Limits())
    yield made
    made.close()
    server.close()


def elf_sections(elf: bytes) -> dict[str, bytes]:
    """A 64-bit little-endian ELF file's sections by name."""
    offset, = struct.unpack_from("<Q", elf, 0x28)
    size, count, names = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", elf, offset + k * size) for k in range(count)]
    table = elf[headers[names][4]:headers[names][4] + headers[names][5]]
    return {table[h[0]:table.index(b"\0", h[0])].decode(): elf[h[4]:h[4] + h[5]] if h[1] != 8 else b""
            for h in headers}


def settle(compiler: IRCompiler) -> None:
    assert compiler.settled(600), "the queued compiles finish"


def test_an_ir_asked_for_twice_is_compiled_in_a_confined_child_and_answered_after(compiler):
    seen = kernel_ir()
    assert compiler.answer(seen["ir"], seen["options"]) is None, "met once: its scout compiles it"
    assert compiler.answer(seen["ir"], seen["options"]) is None, "met twice: compiled for the next ones"
    settle(compiler)
    found = compiler.answer(seen["ir"], seen["options"])
    assert found is not None and compiler.compiled == compiler.attempted == 1
    ours, jit = elf_sections(found.stages["cubin"]), elf_sections(bytes.fromhex(seen["cubin"]))
    # the JIT path's own cubin, but for the source file's time and size, which Triton 3.6's ptxas
    # writes into the line table (and so its relocations) where it can read the file (a store's child cannot)
    assert ours.keys() == jit.keys() and {name for name in ours if ours[name] != jit[name]} <= {".debug_line", ".rela.debug_line"}
    assert found.metadata["num_warps"] == seen["options"]["num_warps"] and "hash" not in found.metadata
    assert compiler.answer(seen["ir"], {**seen["options"], "num_warps": 8}) is None, "other options: another key"


def test_an_ir_that_does_not_compile_is_not_stored(compiler, tmp_path):
    for _ in range(2):
        assert compiler.answer("module { tt.func @broken( }", kernel_ir()["options"]) is None
    settle(compiler)
    assert compiler.attempted == 1 and compiler.compiled == 0 and [p for p in (tmp_path / "store").iterdir() if not p.name.startswith(".")] == []


def test_options_beyond_a_launchs_are_neither_answered_nor_compiled(compiler):
    seen = kernel_ir()
    for _ in range(3):
        assert compiler.answer(seen["ir"], {**seen["options"], "ptx_options": "--output-file /tmp/x"}) is None
    settle(compiler)
    assert compiler.compiled == compiler.attempted == 0 and compiler.store.seen() == set()


def stored(tmp_path) -> tuple[IRCompiler, dict]:
    seen = kernel_ir()
    store = IRStore(tmp_path / "store")
    made = IRCompiler(store, None, TARGET, Limits())
    from evaluator.ir_store import ir_key, requested_options
    entry = Compiled({stage: stage.encode() * 3 for stage in STAGES}, {"name": "scaled_exp"})
    store.put(ir_key(seen["ir"], requested_options(seen["options"]), TARGET, made.version), entry)
    return made, seen


def test_a_scouts_question_is_answered_with_a_copy_it_can_read(tmp_path):
    made, seen = stored(tmp_path)
    scratch, answers = tmp_path / "scratch", tmp_path / "answers"
    scratch.mkdir(), answers.mkdir()
    (scratch / "ir-3.ttir").write_text(seen["ir"])
    answer = answer_scout(made, scratch, protocol.IRAsked(id=3, file="ir-3.ttir", options=seen["options"]), answers)
    assert answer.id == 3 and Path(answer.folder).parent == answers
    found = read_compiled(Path(answer.folder))
    assert found.stages == {stage: stage.encode() * 3 for stage in STAGES} and found.metadata == {"name": "scaled_exp"}
    assert all(oct(p.stat().st_mode & 0o777) == "0o644" for p in Path(answer.folder).iterdir())


@pytest.mark.parametrize("plant", ["link", "fifo", "name"])
def test_a_scouts_ir_file_is_read_only_as_a_regular_file_of_its_own_name(tmp_path, plant):
    """The scout controls its scratch folder: a link to the IR of another evaluation or to a secret,
    a pipe that would block the evaluator, a name reaching out of the folder: none is read."""
    made, seen = stored(tmp_path)
    scratch, answers = tmp_path / "scratch", tmp_path / "answers"
    scratch.mkdir(), answers.mkdir()
    elsewhere = tmp_path / "elsewhere.ttir"
    elsewhere.write_text(seen["ir"])
    name = "ir-1.ttir"
    if plant == "link":
        (scratch / name).symlink_to(elsewhere)
    elif plant == "fifo":
        os.mkfifo(scratch / name)
    else:
        name = "../elsewhere.ttir"
    answer = answer_scout(made, scratch, protocol.IRAsked(id=1, file=name, options=seen["options"]), answers)
    assert answer.folder is None and made.store.seen() == set() and list(answers.iterdir()) == []


@pytest.mark.parametrize("plant", ["stage link", "folder link", "too large"])
def test_what_a_child_wrote_is_read_only_through_no_link_and_within_bounds(tmp_path, plant, monkeypatch):
    secret = tmp_path / "secret"
    secret.write_bytes(b"not a kernel")
    folder = tmp_path / "compiled"
    folder.mkdir()
    for stage in STAGES:
        (folder / stage).write_bytes(b"x")
    (folder / "metadata.json").write_text("{}")
    assert read_compiled(folder) is not None
    if plant == "stage link":
        (folder / "cubin").unlink()
        (folder / "cubin").symlink_to(secret)
    elif plant == "folder link":
        folder = tmp_path / "linked"
        folder.symlink_to(tmp_path / "compiled")
    else:
        from evaluator import ir_store
        monkeypatch.setattr(ir_store, "MAX_ENTRY_BYTES", 3)
    assert read_compiled(folder) is None


class FakeEvaluator:
    """The evaluator's end of a scout's socket, in a thread: it answers each question from `folder`
    (None: no answer at all) and sends a case before each answer."""

    def __init__(self, tmp_path: Path, folder: Path | None):
        self.path = tmp_path / "ctl.sock"
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(self.path))
        self.listener.listen(1)
        self.folder, self.asked = folder, []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        conn, _ = self.listener.accept()
        reader = conn.makefile("rb")
        for line in reader:
            asked = protocol.parse_event(json.loads(line))
            self.asked.append(asked)
            send = lambda m: conn.sendall(json.dumps(protocol.encode(m)).encode() + b"\n")  # noqa: E731
            send(protocol.RunCase(index=len(self.asked), inputs="in.pt"))
            if self.folder is not None:
                send(protocol.IRAnswer(id=asked.id, folder=str(self.folder)))


def test_the_scouts_line_routes_answers_to_the_asking_thread_and_cases_to_the_main_one(tmp_path):
    folder = tmp_path / "answer"
    folder.mkdir()
    for stage in STAGES:
        (folder / stage).write_bytes(stage.encode())
    (folder / "metadata.json").write_text('{"shared": 0}')
    evaluator = FakeEvaluator(tmp_path, folder)
    line = compile_scout.EvaluatorLine(Channel(evaluator.path), tmp_path)
    ir = f'#loc = loc("{tmp_path}/candidate.py":12:1)\nmodule {{}}'
    found = line.ask(ir, {"num_warps": 4})
    assert found.stages["ptx"] == b"ptx" and found.metadata == {"shared": 0} and line.answered == 1
    assert evaluator.asked[0].options == {"num_warps": 4}
    assert (tmp_path / evaluator.asked[0].file).read_text() == '#loc = loc("/candidate/candidate.py":12:1)\nmodule {}', \
        "asked under one name for the candidate's file, whatever its evaluation's folder"
    assert isinstance(line.next_command(), protocol.RunCase), "the case sent meanwhile reaches the main thread"


def test_a_scout_that_gets_no_answer_in_time_compiles_itself(tmp_path, monkeypatch):
    monkeypatch.setattr(compile_scout, "ASK_SECONDS", 0.2)
    evaluator = FakeEvaluator(tmp_path, None)
    line = compile_scout.EvaluatorLine(Channel(evaluator.path), tmp_path)
    assert line.ask("module {}", {"num_warps": 4}) is None and line.answered == 0


FORGER = '''
import gc
import os


def _forge():
    """In the compile scout's process only: questions the scout would never ask."""
    lines = [o for o in gc.get_objects() if type(o).__name__ == "EvaluatorLine"]
    if not lines:
        return
    line = lines[0]
    from evaluator import protocol
    os.symlink("/etc/hostname", line.scratch / "ir-900.ttir")
    line.send(protocol.IRAsked(id=900, file="ir-900.ttir", options={"num_warps": 4}))
    line.send(protocol.IRAsked(id=901, file="../job.json", options={"num_warps": 4}))
    line.ask("module {}", {"num_warps": 4, "ptx_options": "--output-file /tmp/x"})
    for _ in range(2):
        line.ask("module { tt.func @broken( }", {"num_warps": 4})


_forge()
'''


def test_a_candidate_that_forges_its_scouts_questions_gets_nothing_read_or_stored(tmp_path, suite):
    """Static checks off, through a real evaluation: the candidate finds its scout's line and asks
    about a link to a host file, a path out of its folder, options beyond a launch's, and an IR that
    does not compile, twice. Only the last is read (and compiled, in the confined child, and not
    stored); the verdict is the one the candidate earns."""
    from evaluator.evaluate import Evaluator, EvaluatorConfig
    from evaluator.ir_store import ir_key
    from tests.evaluator.test_gpu import gelu_candidate

    config = EvaluatorConfig(device="cpu", static_checks=False, compile_scout=True, cache_dir=tmp_path / "cache")
    with Evaluator(config) as evaluator:
        evaluator.triton_target = TARGET
        compiler = evaluator.ir_compiler = IRCompiler(IRStore(tmp_path / "store"), evaluator.server, TARGET,
                                                      evaluator.limits)
        source = gelu_candidate("y = torch.empty_like(input)\nlaunch(input, y, approximate)\nreturn y", header=FORGER)
        result = evaluator.evaluate(suite["Activation/gelu"], source)
        settle(compiler)
    assert result.correct, (result.verdict, result.reason)
    broken = ir_key("module { tt.func @broken( }", {"num_warps": 4}, TARGET, compiler.version)
    assert compiler.store.seen() == {broken} and compiler.attempted == 1, "asked twice: compiled once, confined"
    assert compiler.compiled == 0 and [p for p in (tmp_path / "store").iterdir() if not p.name.startswith(".")] == []


@pytest.mark.gpu
def test_a_kernel_met_again_is_loaded_from_the_stores_compile_and_scores_the_same(gpu, gelu_task):
    """Three evaluations of one candidate on a GPU: the second's question queues the compile, the
    third's scout is answered from it, and the candidate's process, loading what the scout wrote,
    gets the same verdict and cases."""
    from tests.evaluator.test_gpu import gelu_candidate
    assert gpu.ir_compiler is not None
    source = gelu_candidate("y = torch.empty_like(input)\nlaunch(input, y, approximate)\nreturn y")
    results = [gpu.evaluate(gelu_task, source + f"\n# copy {n}\n") for n in range(2)]
    settle(gpu.ir_compiler)
    results.append(gpu.evaluate(gelu_task, source + "\n# copy 2\n"))
    assert all(r.correct for r in results), [(r.verdict, r.reason) for r in results]
    assert results[0].phases.get("scout_kernels_from_store") == 0
    assert results[2].phases.get("scout_kernels_from_store", 0) >= 1, results[2].phases
    assert [c.passed for c in results[2].cases] == [c.passed for c in results[0].cases]


def test_an_ir_asked_for_once_by_each_of_two_evaluators_is_compiled(tmp_path):
    """The evaluators of a machine (one per GPU) share the store and what was asked of it: a kernel
    met once on each GPU is compiled for the ones after, by the second to meet it."""
    seen = kernel_ir()
    first, second = (IRCompiler(IRStore(tmp_path / "store"), None, TARGET, Limits()) for _ in range(2))
    compiled = Compiled({stage: b"x" for stage in STAGES}, {})
    second.compile = lambda ir_text, sent: compiled
    assert first.answer(seen["ir"], seen["options"]) is None and first.attempted == 0
    assert second.answer(seen["ir"], seen["options"]) is None
    settle(second)
    assert second.attempted == 1 and first.answer(seen["ir"], seen["options"]) == compiled


def test_a_compile_another_evaluator_has_under_way_is_not_started_again(tmp_path):
    """A kernel met on both GPUs at once is compiled by the evaluator that claimed it; the other
    answers from what it stores."""
    seen = kernel_ir()
    first, second = (IRCompiler(IRStore(tmp_path / "store"), None, TARGET, Limits()) for _ in range(2))
    compiled, go = Compiled({stage: b"x" for stage in STAGES}, {}), threading.Event()
    first.compile = lambda ir_text, sent: compiled if go.wait(60) else None
    second.compile = lambda ir_text, sent: compiled
    for _ in range(2):
        assert first.answer(seen["ir"], seen["options"]) is None
    assert second.answer(seen["ir"], seen["options"]) is None, "under way: not stored yet"
    go.set()
    settle(first), settle(second)
    assert (first.attempted, second.attempted) == (1, 0)
    assert second.answer(seen["ir"], seen["options"]) == compiled


def test_a_claim_older_than_a_compile_can_take_is_taken_again(tmp_path):
    """An evaluator that died mid-compile leaves its claim: past CLAIM_SECONDS another compiles."""
    from evaluator.ir_store import CLAIM_SECONDS, CLAIMS
    store = IRStore(tmp_path / "store")
    assert store.claim("k") and not store.claim("k")
    os.utime(tmp_path / "store" / CLAIMS / "k", (0, 0))
    assert store.claim("k"), f"a claim older than {CLAIM_SECONDS} s"
    store.release("k")
    assert store.claim("k")


def test_a_closed_compiler_releases_the_claims_of_compiles_it_had_not_begun(tmp_path):
    """Another evaluator of the machine, or the next run, compiles them without waiting out a claim."""
    seen = kernel_ir()
    store = IRStore(tmp_path / "store")
    made, go = IRCompiler(store, None, TARGET, Limits()), threading.Event()
    made.compile = lambda ir_text, sent: go.wait(60) and None
    irs = [seen["ir"], seen["ir"] + "\n// another kernel\n"]
    for ir in irs * 2:
        made.answer(ir, seen["options"])
    assert len(os.listdir(tmp_path / "store" / ".compiling")) == 2, "one under way, one queued behind it"
    made.close()
    go.set()
    assert made.settled(60) and made.attempted == 1 and os.listdir(tmp_path / "store" / ".compiling") == []


def test_irs_queued_together_are_compiled_at_once_on_the_compilers_threads(tmp_path):
    """Each IR waits for the other's compile to have begun: done only if they run side by side."""
    from evaluator import ir_compiler
    seen = kernel_ir()
    made = IRCompiler(IRStore(tmp_path / "store"), None, TARGET, Limits(), threads=2)
    both = threading.Barrier(2, timeout=60)
    made.compile = lambda ir_text, sent: both.wait() is not None and Compiled({stage: ir_text.encode() for stage in STAGES}, {})
    irs = [seen["ir"], seen["ir"] + "\n// another kernel\n"]
    for ir in irs * 2:
        made.answer(ir, seen["options"])
    settle(made)
    assert made.compiled == 2 and [made.answer(ir, seen["options"]).stages["ptx"] for ir in irs] == [ir.encode() for ir in irs]
    assert ir_compiler.threads(16) == 4 and ir_compiler.threads(2) == 1
    made.close()


def test_an_evaluation_has_its_scouts_questions_answered_up_to_a_bound(tmp_path, monkeypatch):
    """Each question is a file read and a hash: past MAX_IR_QUESTIONS an evaluation's scout is told
    to compile, even what the store holds."""
    import types

    from evaluator import ir_compiler
    from evaluator.stages import correctness

    made, seen = stored(tmp_path)
    scratch, answers = tmp_path / "scratch", tmp_path / "answers"
    scratch.mkdir(), answers.mkdir()
    (scratch / "ir-1.ttir").write_text(seen["ir"])
    monkeypatch.setattr(correctness, "MAX_IR_QUESTIONS", 3)
    ev = types.SimpleNamespace(scorer=types.SimpleNamespace(ir_compiler=made), ir_answers=answers, ir_asked=0)
    box = types.SimpleNamespace(scratch=scratch)
    asked = protocol.IRAsked(id=1, file="ir-1.ttir", options=seen["options"])
    folders = [correctness._ir_answer(ev, box, asked).folder for _ in range(5)]
    assert [f is not None for f in folders] == [True, True, True, False, False]
    assert ir_compiler.MAX_IR_QUESTIONS >= 52, "the suite's most specializations in one evaluation"
