"""Cases kept on disk (reference_cache.py): another evaluator (a fresh ReferenceStore) reads them
instead of computing them, an entry is read only if it is whole, this user's alone and names the same
identity, anything else is removed and built anew, and the folder stays within its bound."""

import dataclasses
import os
import shutil
import time

import pytest
import torch

from evaluator.cases import plan
from evaluator.reference_cache import EXPECTED, INPUTS, MANIFEST, ReferenceCache
from evaluator.references import ReferenceStore

CPU = torch.device("cpu")


def counting(task):
    """The task with its reference counting its calls."""
    calls = []

    def reference(*args, **kwargs):
        calls.append(1)
        return task.reference(*args, **kwargs)

    return dataclasses.replace(task, reference=reference), calls


def store_with(tmp_path, cache, name):
    (tmp_path / name).mkdir()
    store = ReferenceStore(tmp_path / name, CPU)
    store.disk = cache
    return store


def equal(a, b):
    return all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


@pytest.fixture
def cache(tmp_path):
    return ReferenceCache(tmp_path / "references", CPU, max_bytes=1 << 30)


@pytest.fixture
def gelu(suite):
    return suite["Activation/gelu"]


def only_entry(cache):
    entries = [p for p in cache.directory.iterdir() if not p.name.startswith(".")]
    assert len(entries) == 1
    return entries[0]


def test_another_evaluator_reads_the_case_instead_of_computing_it(tmp_path, cache, gelu):
    case = plan(gelu, on_gpu=False)[0]
    built = store_with(tmp_path, cache, "first").get(gelu, case)
    assert cache.load(gelu, case) is not None, "kept once computed"
    second = store_with(tmp_path, cache, "second")
    second._compute = lambda *args: pytest.fail("computed again, not read from disk")
    read = second.get(gelu, case)
    assert equal(read.inputs.args, built.inputs.args)
    assert torch.equal(read.expected.lo, built.expected.lo) and torch.equal(read.expected.hi, built.expected.hi)
    assert read.inputs_file.parent == tmp_path / "second", "candidates read a copy in the evaluator's own folder"


def tamper_expected(entry):
    data = bytearray((entry / EXPECTED).read_bytes())
    data[-100] ^= 0xFF
    (entry / EXPECTED).write_bytes(bytes(data))


def tamper_manifest(entry):
    (entry / MANIFEST).write_text((entry / MANIFEST).read_text().replace('"case"', '"case_"'))


def group_writable(entry):
    os.chmod(entry / INPUTS, 0o620)


def linked(entry):
    os.replace(entry / INPUTS, entry.parent / "elsewhere.pt")
    os.symlink(entry.parent / "elsewhere.pt", entry / INPUTS)


def extra_file(entry):
    (entry / "extra.pt").write_bytes(b"x")


@pytest.mark.parametrize("spoil", [tamper_expected, tamper_manifest, group_writable, linked, extra_file])
def test_an_entry_not_whole_or_not_ours_alone_is_removed_and_built_anew(tmp_path, cache, gelu, spoil):
    case = plan(gelu, on_gpu=False)[0]
    built = store_with(tmp_path, cache, "first").get(gelu, case)
    entry = only_entry(cache)
    spoil(entry)
    assert cache.load(gelu, case) is None and not entry.exists()
    second = store_with(tmp_path, cache, "second")
    computed = []
    compute = second._compute
    second._compute = lambda *args: computed.append(1) or compute(*args)
    again = second.get(gelu, case)
    assert computed and torch.equal(again.expected.lo, built.expected.lo)
    assert cache.load(gelu, case) is not None, "kept again, whole"


def test_a_folder_others_may_write_is_not_used(tmp_path, cache, gelu):
    case = plan(gelu, on_gpu=False)[0]
    os.chmod(cache.directory, 0o777)
    store_with(tmp_path, cache, "first").get(gelu, case)
    assert not list(cache.directory.iterdir()), "nothing written"


def test_another_identity_is_another_entry(tmp_path, cache, gelu):
    case = plan(gelu, on_gpu=False)[0]
    store_with(tmp_path, cache, "first").get(gelu, case)
    other_torch = ReferenceCache(cache.directory, CPU, max_bytes=1 << 30)
    other_torch._machine = {**other_torch._machine, "torch": "0.0"}
    assert other_torch.load(gelu, case) is None, "a case from another torch version is not read"
    assert cache.load(gelu, case) is not None, "and is not removed either"
    assert cache.load(gelu, plan(gelu, on_gpu=False)[1]) is None, "another case is another entry"


def test_the_folder_stays_within_its_bound_oldest_used_out_first(tmp_path, gelu):
    cases = plan(gelu, on_gpu=False)[:3]
    measure = ReferenceCache(tmp_path / "measure", CPU, max_bytes=1 << 30)
    sizes = []
    for case in cases:
        before = measure.nbytes()
        store_with(tmp_path, measure, f"measure-{case.key}").get(gelu, case)
        sizes.append(measure.nbytes() - before)
    bound = sum(sizes) - 1  # all three are one byte too many
    bounded = ReferenceCache(tmp_path / "references", CPU, max_bytes=bound)
    store = store_with(tmp_path, bounded, "bounded")
    store.get(gelu, cases[0])
    store.get(gelu, cases[1])
    os.utime(only_entry_for(bounded, gelu, cases[0]) / MANIFEST, (1, 1))  # cases[0] used longest ago
    store.get(gelu, cases[2])
    assert bounded.nbytes() <= bound
    assert bounded.load(gelu, cases[0]) is None
    assert bounded.load(gelu, cases[1]) is not None and bounded.load(gelu, cases[2]) is not None


def only_entry_for(cache, task, case):
    return cache._entry(cache.identity(task, case))


def test_a_task_whose_functions_were_replaced_is_another_entry(tmp_path, cache, gelu):
    case = plan(gelu, on_gpu=False)[0]
    store_with(tmp_path, cache, "first").get(gelu, case)
    changed, calls = counting(gelu)
    store_with(tmp_path, cache, "second").get(changed, case)
    assert calls, "the same file, another reference function: computed, not read"


def test_a_task_without_a_file_is_not_kept(tmp_path, cache, gelu):
    loose = dataclasses.replace(gelu, source_path=None)
    store_with(tmp_path, cache, "first").get(loose, plan(gelu, on_gpu=False)[0])
    assert not list(cache.directory.iterdir())


def test_an_entry_trimmed_away_by_another_evaluator_meanwhile_is_computed(tmp_path, cache, gelu, monkeypatch):
    from evaluator import reference_cache

    case = plan(gelu, on_gpu=False)[0]
    built = store_with(tmp_path, cache, "first").get(gelu, case)
    checked = reference_cache._valid

    def valid_then_trimmed(entry, identity):
        ok = checked(entry, identity)
        shutil.rmtree(entry)  # another evaluator's trimming, right after the check
        return ok

    monkeypatch.setattr(reference_cache, "_valid", valid_then_trimmed)
    again = store_with(tmp_path, cache, "second").get(gelu, case)
    assert torch.equal(again.expected.lo, built.expected.lo)


def test_a_case_is_written_to_disk_on_the_host_without_holding_the_gpu_lock(tmp_path, cache, gelu, monkeypatch):
    """Writing and hashing an entry is the host's work alone: another candidate's timing may run."""
    import fcntl

    from evaluator import gpu_lock
    from evaluator.task import tensors_in

    lock_dir = tmp_path / "lock"
    gpu_lock.prepare(lock_dir)
    (tmp_path / "store").mkdir()
    store = ReferenceStore(tmp_path / "store", CPU, lock_dir=lock_dir)
    store.disk = cache
    seen = []
    original = cache.store

    def store_and_probe(task, case, inputs_file, expected):
        fd = os.open(lock_dir / "gpu.lock", os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append(("free", {t.device.type for t in tensors_in((expected.lo, expected.hi))}))
        except BlockingIOError:
            seen.append(("held", None))
        finally:
            os.close(fd)
        original(task, case, inputs_file, expected)

    monkeypatch.setattr(cache, "store", store_and_probe)
    case = plan(gelu, on_gpu=False)[0]
    store.get(gelu, case)
    assert seen == [("free", {"cpu"})]
    assert cache.load(gelu, case) is not None


def test_an_unchanged_entry_is_hashed_once_and_a_rewrite_after_that_is_still_caught(tmp_path, cache, gelu, monkeypatch):
    from evaluator import reference_cache

    monkeypatch.setattr(reference_cache, "_checked", {})
    case = plan(gelu, on_gpu=False)[0]
    store_with(tmp_path, cache, "first").get(gelu, case)
    entry = only_entry(cache)
    hashed = []
    file_digest = reference_cache.hashlib.file_digest
    monkeypatch.setattr(reference_cache.hashlib, "file_digest", lambda f, name: hashed.append(f.name) or file_digest(f, name))
    changed = os.stat(entry / EXPECTED).st_ctime
    monkeypatch.setattr(reference_cache.time, "time", lambda: changed + reference_cache.SETTLED_SECONDS / 2)
    assert cache.load(gelu, case) is not None and cache.load(gelu, case) is not None
    assert len(hashed) == 4, "files changed less than SETTLED_SECONDS ago are hashed at every read"
    monkeypatch.setattr(reference_cache.time, "time", lambda: changed + reference_cache.SETTLED_SECONDS + 1)
    hashed.clear()
    assert cache.load(gelu, case) is not None and len(hashed) == 2
    hashed.clear()
    assert cache.load(gelu, case) is not None and cache.load(gelu, case) is not None
    assert hashed == [], "a settled, unchanged file is not read again"
    tamper_expected(entry)
    assert cache.load(gelu, case) is None and not entry.exists(), "rewritten in place, same size: caught"


def test_the_disk_bound_by_default_is_a_quarter_of_the_free_space_within_limits(tmp_path, monkeypatch):
    from evaluator import reference_cache

    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(reference_cache.shutil, "disk_usage", lambda path: usage._replace(free=100 << 30))
    assert reference_cache.default_bytes(tmp_path) == 25 << 30
    assert ReferenceCache(tmp_path / "references", CPU).max_bytes == 25 << 30, "the bound a cache gets by default"
    monkeypatch.setattr(reference_cache.shutil, "disk_usage", lambda path: usage._replace(free=1 << 40))
    assert reference_cache.default_bytes(tmp_path) == 64 << 30
    monkeypatch.setattr(reference_cache.shutil, "disk_usage", lambda path: usage._replace(free=4 << 30))
    assert reference_cache.default_bytes(tmp_path) == 8 << 30


def test_a_gpu_evaluators_host_cache_takes_an_eighth_of_memory_per_gpu_within_limits(monkeypatch):
    from evaluator import references

    monkeypatch.setattr(references.gpu_node, "machine_gpus", lambda: 2)
    for total, expected in ((256 << 30, 16 << 30), (1 << 40, 32 << 30), (32 << 30, 8 << 30)):
        monkeypatch.setattr(references.psutil, "virtual_memory", lambda total=total: type("M", (), {"total": total}))
        assert references.host_budget() == expected


def test_the_machines_gpus_are_counted_even_where_this_process_sees_one(monkeypatch):
    import torch

    from evaluator.gpu_node import machine_gpus

    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "_raw_device_count_nvml", lambda: 4, raising=False)
    assert machine_gpus() == 4

    def no_nvml():
        raise OSError("libnvidia-ml.so.1: cannot open shared object file")
    monkeypatch.setattr(torch.cuda, "_raw_device_count_nvml", no_nvml)
    assert machine_gpus() == 1
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    assert machine_gpus() == 1


def test_a_case_of_a_seed_secret_to_one_evaluator_is_not_kept_on_disk(tmp_path, cache, gelu):
    """Probes draw their seeds per evaluator (probes.py): no other evaluator asks for those cases."""
    from evaluator import probes

    store = store_with(tmp_path, cache, "first")
    own = plan(gelu, on_gpu=False)[0]
    secret = dataclasses.replace(own, seed=own.seed + probes.draw_seeds(1)[0])
    with store.using(gelu):
        store.get(gelu, secret)
        store._compute = lambda *args: pytest.fail("computed again, not kept in memory")
        store.get(gelu, secret)
    assert cache.load(gelu, secret) is None and not list(cache.directory.iterdir())
    del store._compute
    store.get(gelu, own)
    assert cache.load(gelu, own) is not None, "the task's own cases are kept"


@pytest.mark.parametrize("measured_full", [True, False])
def test_an_evaluator_reads_the_disk_from_its_first_evaluation_where_confinement_is_full(tmp_path, monkeypatch,
                                                                                          measured_full):
    """A process confined without candidate code is measured as the evaluator starts: the disk cache
    serves the first evaluations too, and only where that process was fully confined."""
    from evaluator import evaluate, sandbox
    from evaluator.evaluate import Evaluator, EvaluatorConfig

    measured = []
    real = sandbox.confinement_now

    def measuring(server, limits):
        got = real(server, limits)
        measured.append(got)
        return got if measured_full else dataclasses.replace(got, seccomp=False)

    monkeypatch.setattr(evaluate, "confinement_now", measuring)
    with Evaluator(EvaluatorConfig(device="cpu", cache_dir=tmp_path, watch_project=False)) as evaluator:
        assert measured and measured[0] is not None
        if measured[0].level != "full":
            pytest.skip(f"confinement on this machine: {measured[0].level}")
        assert (evaluator.references.disk is evaluator.reference_cache) == measured_full


def test_an_evaluator_whose_fork_server_cannot_start_still_starts_without_the_disk(tmp_path, monkeypatch):
    """The failure is the first evaluation's to report, as before the start measured confinement."""
    from evaluator.evaluate import Evaluator, EvaluatorConfig
    from evaluator.fork_server import ForkServer, ForkServerError

    def cannot_start(self):
        raise ForkServerError("the fork server failed to start: test")

    monkeypatch.setattr(ForkServer, "_start", cannot_start)
    with Evaluator(EvaluatorConfig(device="cpu", cache_dir=tmp_path, watch_project=False)) as evaluator:
        assert evaluator.references.disk is None


def test_only_cases_dearer_to_build_than_to_read_are_kept(tmp_path, gelu):
    """A case is kept when building it took longer than reading its bytes back would, at the cache's
    rate of seconds per GiB: a slow reference's case is kept at the default rate; at a rate no
    build reaches, nothing is kept and the next evaluator computes the case again."""
    case = plan(gelu, on_gpu=False)[0]

    def slow_reference(*args, **kwargs):
        time.sleep(0.05)
        return gelu.reference(*args, **kwargs)

    slow = dataclasses.replace(gelu, reference=slow_reference)
    cache = ReferenceCache(tmp_path / "references", CPU, max_bytes=1 << 30)
    store_with(tmp_path, cache, "first").get(slow, case)
    assert cache.load(slow, case) is not None

    reading_is_dear = ReferenceCache(tmp_path / "dear", CPU, max_bytes=1 << 30, read_seconds_per_gib=1e12)
    store_with(tmp_path, reading_is_dear, "second").get(slow, case)
    assert reading_is_dear.load(slow, case) is None
    counted, calls = counting(slow)
    store_with(tmp_path, reading_is_dear, "third").get(counted, case)
    assert calls, "not kept, so computed again"
    assert not reading_is_dear.worth_keeping(10.0, 1 << 20) and cache.worth_keeping(0.01, 1 << 20)


def test_the_size_walk_skips_a_folder_another_evaluator_removes_meanwhile(tmp_path, gelu, monkeypatch):
    cache = ReferenceCache(tmp_path / "references", CPU, max_bytes=1 << 30)
    case = plan(gelu, on_gpu=False)[0]
    store_with(tmp_path, cache, "kept").get(gelu, case)
    kept = cache.nbytes()
    building = cache.directory / ".building-elsewhere"
    building.mkdir()
    (building / INPUTS).write_bytes(b"x" * 100)
    listing = os.scandir

    def listed_then_removed(path="."):
        entries = list(listing(path))
        if isinstance(path, (str, os.PathLike)) and os.fspath(path) == os.fspath(cache.directory):
            shutil.rmtree(building)  # the other evaluator renames or removes its folder after our listing
        return Listing(entries)

    monkeypatch.setattr(os, "scandir", listed_then_removed)
    assert cache.nbytes() == kept


class Listing:
    """A listing made already, an iterator and a context manager as os.scandir's is."""

    def __init__(self, entries):
        self._entries = iter(entries)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._entries)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
