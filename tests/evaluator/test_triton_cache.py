"""Candidates' Triton cache: private to an evaluation, over read-only stubs a trusted process built."""

import os

from evaluator import triton_cache
from evaluator.fork_server import ForkServer
from evaluator.protocol import Job
from evaluator.sandbox import Limits, Sandbox
from tests.evaluator.child_messages import after_device_ready

REPORTS_ITS_CACHE = '''
import os
try:
    open(os.path.join(os.environ["AGENTLOOP_TRITON_STUBS"], "planted.so"), "w").write("x")
    wrote = "wrote"
except OSError as exc:
    wrote = type(exc).__name__
raise RuntimeError(" ".join([os.environ["TRITON_CACHE_MANAGER"], os.environ["TRITON_CACHE_DIR"],
                             open(os.path.join(os.environ["AGENTLOOP_TRITON_STUBS"], "k", "stub.so")).read(), wrote]))
'''


def test_a_miss_in_the_private_cache_is_answered_by_a_regular_stub_file(tmp_path, monkeypatch):
    private, stubs = tmp_path / "private", tmp_path / "stubs"
    (stubs / "KEY").mkdir(parents=True)
    (stubs / "KEY" / "cuda_utils.so").write_bytes(b"built by a trusted process")
    (stubs / "KEY" / "linked.so").symlink_to(stubs / "KEY" / "cuda_utils.so")
    triton_cache.use_layers(str(private), str(stubs))
    for name in ("TRITON_CACHE_DIR", "TRITON_CACHE_MANAGER", triton_cache.STUBS_VARIABLE):
        monkeypatch.setenv(name, os.environ[name])  # restored after the test
    manager = triton_cache.LayeredCacheManager("KEY")
    assert manager.get_file("cuda_utils.so") == str(stubs / "KEY" / "cuda_utils.so")
    assert manager.get_file("linked.so") is None and manager.get_file("missing.so") is None
    written = manager.put(b"compiled here", "launcher.so")
    assert written.startswith(str(private)) and manager.get_file("launcher.so") == written


def test_confined_processes_read_the_stubs_and_cannot_write_them(tmp_path):
    stubs = tmp_path / "stubs"
    (stubs / "k").mkdir(parents=True)
    (stubs / "k" / "stub.so").write_text("trusted")
    job = Job(task="Activation/gelu", entry="gelu", device="cpu")
    server = ForkServer(interpret=True, triton_stubs=stubs)
    try:
        with Sandbox(server, "candidate", job, {"candidate.py": REPORTS_ITS_CACHE}, Limits()) as box:
            message = after_device_ready(box)
    finally:
        server.close()
    manager, private, stub, wrote = message["reason"].rsplit(": ", 1)[1].split()
    assert manager == triton_cache.MANAGER and private.startswith("/tmp/")
    assert stub == "trusted" and wrote in ("OSError", "PermissionError")
    assert sorted(os.listdir(stubs)) == ["k"]


REUSES_THE_KEY = '''
import sys
import triton
import triton.runtime.autotuner  # noqa: F401 - holds the key function by name in some Triton versions
from evaluator import triton_cache

replaced = triton_cache.reuse_key("key-from-the-fork-server")
later = __import__("importlib").import_module("triton.runtime.cache")
print(replaced, triton_cache.own_key(), later.triton_key())
'''


def test_a_fresh_process_takes_tritons_key_as_given_instead_of_hashing_triton():
    """The memory check's process is started by Compute Sanitizer, not forked: without the key it
    hashed Triton's sources and compiler library again (0.4 s of CPU per candidate on a GPU host)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", REUSES_THE_KEY], capture_output=True, text=True, timeout=120,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    replaced, own, cached = done.stdout.split()
    assert int(replaced) >= 1 and own == cached == "key-from-the-fork-server", done.stderr


def test_the_key_handed_over_is_the_one_triton_computes():
    from triton.runtime.cache import triton_key
    assert triton_cache.own_key() == triton_key() and len(triton_cache.own_key()) >= 32
