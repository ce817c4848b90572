"""The OS boundary itself (confinement.py), tried from inside a confined process, and what the
evaluator reports when the OS refuses part of it."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evaluator import confinement, isolation
from evaluator.fork_server import PROJECT_ROOT
from tests.evaluator.child_messages import after_device_ready

PROBE = textwrap.dedent('''
    import ctypes, errno, json, os, socket, sys
    sys.path.insert(0, sys.argv[3])
    from evaluator import confinement
    scratch, shared = sys.argv[1], sys.argv[2]
    BLOCK_UNSHARE
    applied = confinement.confine(scratch, confinement.View(writable=(shared, *sys.argv[5:])), gpu=False)
    libc = ctypes.CDLL(None, use_errno=True)

    def attempt(action):
        try:
            action()
            return "done"
        except OSError as exc:
            return errno.errorcode.get(exc.errno, str(exc.errno))

    def write(path):
        with open(path, "a") as f:
            f.write("x")

    def call(result):
        return "done" if result == 0 else errno.errorcode.get(ctypes.get_errno(), "?")

    report = {
        "applied": applied.__dict__,
        "uid": os.getuid(),
        "pid": os.getpid(),
        "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
        "write_scratch": attempt(lambda: write(os.path.join(scratch, "mine.txt"))),
        "write_shared": attempt(lambda: write(os.path.join(shared, "ours.txt"))),
        "write_project": attempt(lambda: write(os.path.join(sys.argv[3], "README.md"))),
        "write_etc": attempt(lambda: write("/etc/hostname")),
        "write_root": attempt(lambda: write(os.path.join(os.path.dirname(sys.argv[3]), "new-file"))),
        "home_visible": os.path.exists(os.path.expanduser("~root/.bash_history")),
        "shm": sorted(os.listdir("/dev/shm")),
        "connect": attempt(lambda: socket.create_connection(("127.0.0.1", int(sys.argv[4])), timeout=1)),
        "unshare": call(libc.unshare(0x10000000)),
        "mount": call(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)),
        "ptrace": call(libc.ptrace(16, 1, 0, 0)),
        "also_writable": [os.path.exists(p) for p in sys.argv[5:]],
    }
    print(json.dumps(report), flush=True)
''')

# An OS without network namespaces, as far as everything started under this filter can tell.
BLOCK_UNSHARE = textwrap.dedent('''
    import errno as _errno, pyseccomp as _seccomp
    _refuse = _seccomp.SyscallFilter(_seccomp.ALLOW)
    _refuse.add_rule(_seccomp.ERRNO(_errno.EPERM), "unshare", _seccomp.Arg(0, _seccomp.MASKED_EQ, 0x40000000, 0x40000000))
    _refuse.load()
''').replace("\n", "; ").strip("; ")


def _probe(tmp_path: Path, refuse_namespaces: bool = False, also_writable: tuple[Path, ...] = ()) -> dict:
    import socket

    scratch, shared = tmp_path / "scratch", tmp_path / "shared"
    for folder in (scratch, shared):
        folder.mkdir()
        if os.geteuid() == 0:
            os.chown(folder, confinement.SANDBOX_UID, confinement.SANDBOX_UID)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    script = PROBE.replace("BLOCK_UNSHARE", BLOCK_UNSHARE if refuse_namespaces else "pass")
    try:
        done = subprocess.run([sys.executable, "-c", script, str(scratch), str(shared), str(PROJECT_ROOT),
                               str(listener.getsockname()[1]), *map(str, also_writable)],
                              capture_output=True, text=True, timeout=120)
    finally:
        listener.close()
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_confined_process_sees_and_reaches_only_its_own(tmp_path):
    report = _probe(tmp_path)
    assert report["applied"]["refused"] == [], report["applied"]
    assert set(report["applied"]["namespaces"]) >= {"mnt", "pid", "net", "ipc", "uts"}
    assert report["pids"] == [1, report["pid"]], "only itself and its namespace's first process"
    assert report["uid"] == (confinement.SANDBOX_UID if os.geteuid() == 0 else os.geteuid())
    assert report["write_scratch"] == "done" and report["write_shared"] == "done"
    assert report["write_project"] in ("EROFS", "EACCES") and report["write_etc"] in ("EROFS", "EACCES", "ENOENT")
    assert report["write_root"] == "EROFS"  # not even into the fresh root's own folders
    assert not report["home_visible"]
    assert report["shm"] == []
    assert report["connect"] in ("ENETUNREACH", "ECONNREFUSED", "EHOSTUNREACH")
    assert report["unshare"] == report["mount"] == report["ptrace"] == "EPERM"
    assert not (tmp_path / "shared" / "README.md").exists()
    assert (tmp_path / "scratch" / "mine.txt").read_text() == "x"


def test_a_writable_path_that_does_not_exist_yet_leaves_the_root_whole(tmp_path):
    """A file to be shared that nobody has made yet (a benchmark's log) is not there inside; the
    rest of the root is built as ever, rather than refused halfway."""
    report = _probe(tmp_path, also_writable=(tmp_path / "not-yet.jsonl",))
    assert report["applied"]["refused"] == [] and report["applied"]["root"] is True, report["applied"]
    assert report["also_writable"] == [False]
    assert report["write_project"] in ("EROFS", "EACCES") and report["pids"] == [1, report["pid"]]


def test_what_the_os_refuses_is_left_out_and_said(tmp_path):
    report = _probe(tmp_path, refuse_namespaces=True)
    assert report["applied"]["refused"] == ["net namespace (Operation not permitted)"]
    assert report["connect"] == "done"  # what is refused is not pretended
    assert report["applied"]["root"] is True and report["applied"]["seccomp"] is True  # the rest still holds
    assert report["write_project"] in ("EROFS", "EACCES") and report["unshare"] == "EPERM"


# An OS that refuses every mount, as far as everything started under this filter can tell.
BLOCK_MOUNT = textwrap.dedent('''
    import errno as _errno, pyseccomp as _seccomp
    _refuse = _seccomp.SyscallFilter(_seccomp.ALLOW)
    _refuse.add_rule(_seccomp.ERRNO(_errno.EPERM), "mount")
    _refuse.load()
''').replace("\n", "; ").strip("; ")


@pytest.mark.parametrize("refusal, level", [(BLOCK_UNSHARE, "partial (no net namespace)"),
                                            (BLOCK_MOUNT, "partial (no root of its own)")])
def test_the_evaluator_measures_and_reports_partial_isolation(tmp_path, refusal, level):
    """An evaluator whose OS refuses namespaces or mounts (a seccomp filter inherited by everything
    it starts) reports it, as measured from outside, in every result and says it once."""
    script = textwrap.dedent(f'''
        import logging, sys
        {refusal}
        from evaluator.evaluate import Evaluator, EvaluatorConfig
        from evaluator.loader import find_task, load_suite
        logging.basicConfig(level=logging.WARNING)
        task = find_task("Activation/gelu", load_suite())
        with Evaluator(EvaluatorConfig(device="cpu", cache_dir=sys.argv[1])) as evaluator:
            for _ in range(2):
                result = evaluator.evaluate(task, task.solution_path.read_text())
                print(result.verdict.value, result.environment.isolation, flush=True)
    ''')
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "cache")], capture_output=True, text=True,
                          timeout=600, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith("CORRECT partial (no ") for line in lines), lines
    assert lines[0] == f"CORRECT {level}"
    assert done.stderr.count("isolation: the OS refused part of the sandbox") == 1, done.stderr


@pytest.mark.parametrize("fields, level", [
    (dict(namespaces=("user", "pid", "mnt", "net", "ipc", "uts"), own_root=True, own_uid=True, seccomp=True,
          no_new_privs=True, capabilities=False, uid=1000), "full"),
    (dict(namespaces=("pid", "mnt", "net", "ipc", "uts"), own_root=True, own_uid=True, seccomp=True, no_new_privs=True,
          capabilities=False, uid=65534), "full"),
    (dict(namespaces=("pid", "mnt", "net", "ipc", "uts"), own_root=False, own_uid=True, seccomp=True,
          no_new_privs=True, capabilities=False, uid=65534), "partial (no root of its own)"),
    (dict(namespaces=("net",), own_root=False, own_uid=False, seccomp=False, no_new_privs=True, capabilities=True,
          uid=0),
     "partial (no user of its own, no pid namespace, no mnt namespace, no ipc namespace, no uts namespace, "
     "no root of its own, no seccomp, no privileges dropped)"),
])
def test_isolation_levels_name_what_is_missing(fields, level):
    assert isolation.Measured(**fields).level == level


def test_a_profiled_process_still_drops_every_privilege():
    """Nsight Compute must reach the profiled process, so it gets no namespaces, but the rest holds."""
    script = textwrap.dedent(f'''
        import sys
        sys.path.insert(0, {str(PROJECT_ROOT)!r})
        from evaluator import confinement
        applied = confinement.unprivileged_in_place()
        status = dict(line.split(":", 1) for line in open("/proc/self/status"))
        print(applied.seccomp, applied.unprivileged, status["Seccomp"].strip(), status["NoNewPrivs"].strip(),
              status["CapEff"].strip(), status["CapBnd"].strip(), status["Uid"].split()[0])
    ''')
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seccomp, unprivileged, mode, nnp, effective, bounding, uid = done.stdout.split()
    assert (seccomp, unprivileged, mode, nnp) == ("True", "True", "2", "1")
    assert int(effective, 16) == int(bounding, 16) == 0
    assert int(uid) == (confinement.SANDBOX_UID if os.geteuid() == 0 else os.geteuid())


EMPTIED_PROBE = textwrap.dedent('''
    import json, os, sys
    sys.path.insert(0, sys.argv[3])
    from evaluator import confinement
    scratch, visible = sys.argv[1], sys.argv[2]
    view = confinement.View(readable=(visible,), emptied=(os.path.join(visible, "tasks"),))
    confinement.confine(scratch, view, gpu=False)
    print(json.dumps({"visible": sorted(os.listdir(visible)),
                      "tasks": sorted(os.listdir(os.path.join(visible, "tasks")))}), flush=True)
''')


def test_an_emptied_folder_is_seen_empty_inside_a_visible_one(tmp_path):
    scratch, visible = tmp_path / "scratch", tmp_path / "visible"
    (visible / "tasks").mkdir(parents=True)
    (visible / "tasks" / "reference.py").write_text("ANSWER = 42\n")
    (visible / "kept.txt").write_text("kept\n")
    scratch.mkdir()
    if os.geteuid() == 0:
        os.chown(scratch, confinement.SANDBOX_UID, confinement.SANDBOX_UID)
    done = subprocess.run([sys.executable, "-c", EMPTIED_PROBE, str(scratch), str(visible), str(PROJECT_ROOT)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"visible": ["kept.txt", "tasks"], "tasks": []}
    assert (visible / "tasks" / "reference.py").exists()  # hidden from the child, not removed


def test_a_checkout_of_the_project_on_pythons_path_is_not_made_visible(tmp_path, monkeypatch):
    other = tmp_path / "other-checkout"
    (other / "tasks" / "Activation").mkdir(parents=True)
    (other / "evaluator").mkdir()
    (other / "evaluator" / "task.py").write_text("")
    plain = tmp_path / "plain-folder"
    plain.mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(other), str(plain)])
    visible = confinement._system_paths()
    assert str(plain) in visible and str(other) not in visible


def test_a_suite_installed_inside_an_evaluator_package_is_emptied(tmp_path):
    site = tmp_path / "site-packages"
    (site / "evaluator" / "_tasks" / "Activation").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    suites = confinement.installed_suites([str(site), str(tmp_path / "elsewhere")])
    assert str(site / "evaluator" / "_tasks") in suites
    assert not any(s.startswith(str(tmp_path / "elsewhere")) for s in suites)


def test_of_the_gpus_own_nodes_a_confined_process_gets_its_gpus_alone(tmp_path, monkeypatch):
    for name in ("nvidia0", "nvidia1", "nvidia12", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"):
        (tmp_path / name).write_text("")
    monkeypatch.setattr(confinement, "GPU_DEVICES", (str(tmp_path / "nvidia*"),))
    names = lambda own: sorted(os.path.basename(p) for p in confinement.gpu_nodes(own))  # noqa: E731
    assert names(str(tmp_path / "nvidia1")) == ["nvidia-uvm", "nvidia-uvm-tools", "nvidia1", "nvidiactl"]
    assert names(None) == ["nvidia-uvm", "nvidia-uvm-tools", "nvidia0", "nvidia1", "nvidia12", "nvidiactl"]


REPORTS_ITS_GPU = textwrap.dedent('''
    import os
    from evaluator import gpu_node
    raise RuntimeError(f"one {os.environ.get('AGENTLOOP_ONE_GPU')} visible {os.environ.get('CUDA_VISIBLE_DEVICES')} "
                       f"device {gpu_node.own_device('cuda:3')} {gpu_node.own_device('cpu')}")
''')


@pytest.mark.parametrize("node, expected", [
    ("/dev/nvidia3", "one 1 visible None device cuda:0 cpu"),
    (None, "one None visible 2,3 device cuda:3 cpu"),
])
def test_a_process_given_one_gpus_node_calls_it_device_0_whatever_the_host_numbers(node, expected, monkeypatch):
    """The evaluator of the host's fourth GPU asks for cuda:3; inside, that GPU is the only one."""
    from evaluator.fork_server import ForkServer
    from evaluator.protocol import Job
    from evaluator.sandbox import Limits, Reach, Sandbox

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    server = ForkServer(interpret=True)
    try:
        job = Job(task="Activation/gelu", entry="gelu", device="cpu")
        with Sandbox(server, "candidate", job, {"candidate.py": REPORTS_ITS_GPU}, Limits(),
                     Reach(gpu=True, gpu_node=node)) as box:
            message = after_device_ready(box)
    finally:
        server.close()
    assert message["reason"].endswith(expected), message



MAKES_A_GPU_NODE = textwrap.dedent('''
    import errno, os, stat
    tried = []
    for path in ("/dev/nvidia9", "/tmp/nvidia9", os.path.join(os.getcwd(), "nvidia9")):
        try:
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(195, 9))  # the driver's major number
            tried.append("made")
        except OSError as exc:
            tried.append(errno.errorcode.get(exc.errno, str(exc.errno)))
    raise RuntimeError("mknod " + " ".join(tried))
''')


def test_a_confined_process_cannot_make_itself_another_gpus_node():
    """Given one GPU's node, a candidate that knows the driver's numbers makes none of its own."""
    from evaluator.fork_server import ForkServer
    from evaluator.protocol import Job
    from evaluator.sandbox import Limits, Reach, Sandbox

    server = ForkServer(interpret=True)
    try:
        job = Job(task="Activation/gelu", entry="gelu", device="cpu")
        with Sandbox(server, "candidate", job, {"candidate.py": MAKES_A_GPU_NODE}, Limits(),
                     Reach(gpu=True, gpu_node="/dev/nvidia3")) as box:
            message = after_device_ready(box)
    finally:
        server.close()
    made = message["reason"].rsplit("mknod ", 1)[1].split()
    assert len(made) == 3 and "made" not in made, message


def test_the_evaluators_own_process_measures_as_sharing_its_root_and_a_gone_one_not_at_all():
    here = isolation.measured(os.getpid())
    assert here is not None and here.own_root is False and "no root of its own" in here.level
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert isolation.measured(gone.pid) is None
