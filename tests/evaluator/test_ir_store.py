"""Kernels compiled from their Triton IR alone, stored under a key the evaluator computes, and
stood in for the backend's stages in a compile scout (evaluator/ir_store.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator import ir_store
from evaluator.ir_store import Compiled, IRStore

SCENARIO = Path(__file__).parent / "ir_store_files" / "scenario.py"


@pytest.mark.parametrize("num_warps", [8])  # not Triton's default: the launch's options travel with the IR
def test_a_kernel_answered_from_its_ir_compile_is_the_one_the_jit_path_makes(num_warps):
    """Compiled once by Triton's JIT path, and again into a fresh cache with the scout's stages
    answered from the compile of its IR alone: every stage's file and the metadata are the same,
    and LLVM did not run the second time."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, str(SCENARIO), str(num_warps)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["same"] == {ext: True for ext in ("source", "ttir", "ttgir", "llir", "ptx", "cubin")}
    assert seen["same_metadata"] and seen["llvm_runs"] == 0
    assert seen["asked"] == [seen["options"]] and seen["options"]["num_warps"] == num_warps


@pytest.mark.parametrize("options", [
    {"num_warps": 4, "ptx_options": "--output-file /tmp/x"},   # ptxas options: not a launch's
    {"num_warps": 4, "extern_libs": {"libdevice": "/etc/passwd"}},
    {"num_warps": 4, "ir_override": "/tmp/other.ttgir"},
    {"num_warps": True},                                        # a bool is not an int
    {"num_warps": "4"},
    ["num_warps", 4],
])
def test_options_beyond_a_launchs_are_not_answered(options):
    assert ir_store.requested_options(options) is None


def test_launch_options_are_taken_in_one_order():
    assert list(ir_store.requested_options({"num_warps": 8, "maxnreg": None, "debug": False})) == [
        "debug", "maxnreg", "num_warps"]


def test_the_key_changes_with_the_ir_the_options_the_target_and_triton():
    base = ("module {}", {"num_warps": 4}, {"backend": "cuda", "arch": 90, "warp_size": 32}, "t1")
    keys = {ir_store.ir_key(*base),
            ir_store.ir_key("module { }", *base[1:]),
            ir_store.ir_key(base[0], {"num_warps": 8}, *base[2:]),
            ir_store.ir_key(*base[:2], {"backend": "cuda", "arch": 100, "warp_size": 32}, base[3]),
            ir_store.ir_key(*base[:3], "t2")}
    assert len(keys) == 5


def compiled(size: int = 4) -> Compiled:
    return Compiled({stage: bytes([n]) * size for n, stage in enumerate(ir_store.STAGES)}, {"name": "k", "shared": 0})


def test_an_entry_is_read_back_whole_and_is_not_replaced(tmp_path):
    store = IRStore(tmp_path / "store")
    assert store.get("a" * 64) is None
    assert store.put("a" * 64, compiled())
    assert store.get("a" * 64) == compiled()
    assert not store.put("a" * 64, compiled(8)), "an entry is written once"
    assert store.get("a" * 64) == compiled()
    assert oct((tmp_path / "store").stat().st_mode & 0o777) == "0o700"


def test_an_entry_too_large_or_missing_a_stage_is_not_stored(tmp_path, monkeypatch):
    store = IRStore(tmp_path / "store")
    monkeypatch.setattr(ir_store, "MAX_ENTRY_BYTES", 100)
    assert not store.put("b" * 64, compiled(64))
    partial = Compiled({"ttgir": b"x"}, {})
    assert not store.put("c" * 64, partial)
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == [".compiling", ".seen"]


def test_the_store_keeps_to_its_bound_by_letting_the_oldest_entries_go(tmp_path, monkeypatch):
    import os
    monkeypatch.setattr(ir_store, "MAX_STORE_BYTES", 4 * compiled(100).size())
    store = IRStore(tmp_path / "store")
    for n in range(5):
        assert store.put(f"{n}" * 64, compiled(100))
        os.utime(tmp_path / "store" / (f"{n}" * 64), (1000 + n, 1000 + n))
    kept = sorted(p.name[0] for p in (tmp_path / "store").iterdir() if not p.name.startswith("."))
    assert kept == ["2", "3", "4"], "down to three quarters of the bound, the oldest first"
    assert store.get("4" * 64) == compiled(100) and store.get("0" * 64) is None
    assert IRStore(tmp_path / "store").bytes == store.bytes == 3 * (4 * 100 + len('{"name": "k", "shared": 0}'))


def test_what_was_asked_for_is_remembered_across_stores_and_forgotten_past_its_bound(tmp_path, monkeypatch):
    store = IRStore(tmp_path / "store")
    assert not store.seen_before("a" * 64) and store.seen_before("a" * 64)
    assert IRStore(tmp_path / "store").seen_before("a" * 64), "another evaluator of the machine, or a later run"
    monkeypatch.setattr(ir_store, "MAX_SEEN", 2)
    store = IRStore(tmp_path / "store")
    assert not store.seen_before("b" * 64) and store.seen() == {"a" * 64, "b" * 64}
    assert not store.seen_before("c" * 64) and store.seen() == {"c" * 64}, "past the bound, all forgotten"
