"""The evaluator's end of the IR store (ir_store.py): it answers compile scouts' questions, and
compiles an IR that a second question asks for, in a confined child of its own, for the ones after.

An IR met once is compiled by its own scout as before and costs nothing more; from the second
question on, the store's compile answers. Questions come with the IR as a file in the scout's
scratch folder, which the scout controls: only a regular file is read, never through a link, and
never more than MAX_IR_CHARS. What the child wrote is read the same way: the IR it compiled came from
a candidate."""

from __future__ import annotations

import functools
import json
import re
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from evaluator import protocol, triton_cache
from evaluator.ir_store import MAX_IR_CHARS, Compiled, IRStore, ir_key, read_compiled, read_regular, requested_options
from evaluator.sandbox import ChildGone, Limits, Reach, Sandbox

IR_FILE = re.compile(r"ir-[0-9]{1,9}\.ttir")
COMPILE_SECONDS = 120.0
MAX_QUEUED = 64  # IRs waiting for a compile; more are let go (their scouts compile them)
MAX_IR_QUESTIONS = 256  # a scout's questions read and answered; later ones are told to compile


def threads(cores: int) -> int:
    """Compiles at once for an evaluator counting on `cores` cores: a quarter of them (the children
    run at the scouts' low priority), so that a workload's kernels are stored while it still meets
    them, not one after another behind it."""
    return max(1, min(8, cores // 4))


class IRCompiler:
    """One per evaluator: an IR asked for a second time (by any evaluator of the machine, in this run
    or an earlier one: the store marks what was asked) is compiled on one of `threads` threads, by
    this evaluator unless another of the machine's has claimed it."""

    def __init__(self, store: IRStore, server, target: dict[str, Any], limits: Limits, threads: int = 1):
        self.store, self.server, self.target, self.limits = store, server, target, limits
        self.queued: set[str] = set()
        self.lock = threading.Lock()
        self.emptied = threading.Condition(self.lock)
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="ir compile")
        self.attempted = self.compiled = 0

    @functools.cached_property
    def version(self) -> str:
        """Triton's own key (0.4 s to hash, so not at the evaluator's start) and the environment it
        counts."""
        return json.dumps([triton_cache.own_key() or "", _compile_environment()])

    def answer(self, ir_text: str, options: Any) -> Compiled | None:
        """The stored compile of this IR with these options, or None (and, the second time it is
        asked for, a compile queued)."""
        sent = requested_options(options)
        if sent is None or len(ir_text) > MAX_IR_CHARS:
            return None
        key = ir_key(ir_text, sent, self.target, self.version)
        found = self.store.get(key)
        if found is None:
            self._seen(key, ir_text, sent)
        return found

    def _seen(self, key: str, ir_text: str, sent: dict[str, Any]) -> None:
        if not self.store.seen_before(key):
            return
        with self.lock:
            if key in self.queued or len(self.queued) >= MAX_QUEUED or not self.store.claim(key):
                return
            self.queued.add(key)
        try:
            future = self.pool.submit(self._compile, key, ir_text, sent)
        except RuntimeError:  # closed
            self._let_go(key)
            return
        future.add_done_callback(lambda done: done.cancelled() and self._let_go(key))

    def _compile(self, key: str, ir_text: str, sent: dict[str, Any]) -> None:
        try:
            if self.store.has(key):  # stored by another evaluator since this one asked
                return
            with self.lock:
                self.attempted += 1
            compiled = self.compile(ir_text, sent)
            if compiled is not None and self.store.put(key, compiled):
                with self.lock:
                    self.compiled += 1
        finally:
            self._let_go(key)

    def _let_go(self, key: str) -> None:
        """`key` compiled, failed, or dropped unstarted at close: its claim is released."""
        self.store.release(key)
        with self.lock:
            self.queued.discard(key)
            self.emptied.notify_all()

    def settled(self, timeout: float) -> bool:
        """Waits until no compile is queued or under way; False if `timeout` seconds passed first."""
        with self.emptied:
            return self.emptied.wait_for(lambda: not self.queued, timeout)

    def compile(self, ir_text: str, sent: dict[str, Any]) -> Compiled | None:
        """The IR compiled in a confined child; None if it failed or wrote something unreadable."""
        request = json.dumps({"ir": ir_text, "options": sent, "target": self.target})
        job = protocol.Job(task="ir compile", entry="", device="cpu")
        try:
            with Sandbox(self.server, "ir_compile", job, {"request.json": request}, self.limits, Reach()) as box:
                deadline = time.monotonic() + COMPILE_SECONDS
                while time.monotonic() < deadline:
                    message = box.recv(timeout=1.0)
                    if message is not None:
                        done = isinstance(protocol.parse_event(message), protocol.IRCompiled)
                        return read_compiled(box.scratch / "compiled") if done else None
        except (ChildGone, protocol.ProtocolError, OSError):
            return None
        return None

    def close(self) -> None:
        """Compiles not begun are dropped and their claims released; one under way finishes."""
        self.pool.shutdown(wait=False, cancel_futures=True)


def _compile_environment() -> dict[str, Any]:
    """The environment variables Triton counts in its own cache key."""
    try:
        from triton.runtime.cache import get_cache_invalidating_env_vars
    except ImportError:
        try:
            from triton.compiler.compiler import get_cache_invalidating_env_vars
        except ImportError:
            return {}
    return {k: str(v) for k, v in sorted(get_cache_invalidating_env_vars().items())}


def answer_scout(compiler: IRCompiler, scratch: Path, asked: protocol.IRAsked, answers: Path) -> protocol.IRAnswer:
    """A scout's question answered: the stored compile copied into `answers` (a folder of the
    evaluation's that its processes read and cannot write), or no folder."""
    if not IR_FILE.fullmatch(asked.file):
        return protocol.IRAnswer(id=asked.id)
    data = read_regular(scratch / asked.file, MAX_IR_CHARS)
    try:
        found = compiler.answer(data.decode(), asked.options) if data is not None else None
    except UnicodeDecodeError:
        found = None
    if found is None:
        return protocol.IRAnswer(id=asked.id)
    folder = Path(tempfile.mkdtemp(prefix="ir-", dir=answers))
    try:
        for name, content in {**found.stages, "metadata.json": json.dumps(found.metadata).encode()}.items():
            (folder / name).write_bytes(content)
            (folder / name).chmod(0o644)
        folder.chmod(0o755)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return protocol.IRAnswer(id=asked.id)
    return protocol.IRAnswer(id=asked.id, folder=str(folder))
