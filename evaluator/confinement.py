"""The OS boundary around a process that runs candidate code.

A child of the fork server calls `confine` before it imports the candidate. It becomes an
unprivileged user (a dedicated uid when the evaluator is root, else the evaluator's own uid inside a
user namespace of its own) with new mount, PID, network, IPC and UTS namespaces. Its file system is
a fresh, read-only root that holds only what running Python, torch and Triton needs, read-only, plus
the folders its evaluation gave it (its scratch folder and the evaluation's shared folder writable;
inputs and the GPU lock read-only), a private /tmp and /dev/shm, a /dev with the null devices and
the GPU's, and a /proc of its own PID namespace. It drops every capability, sets no-new-privileges
and loads a seccomp filter that refuses the system calls a kernel never needs (ptrace, namespaces,
mounts, BPF, keyrings, kernel modules, ...).

Three processes result. The fork server's child that called `confine` stays outside the new PID
namespace: it waits and exits as the candidate's process did, so the evaluator's bookkeeping is
unchanged. The namespace's first process reaps whatever the candidate leaves behind and ends with
it, and with it the kernel kills everything left in the namespace. The candidate's process is its
child (the first process of a namespace ignores the signals it sends itself, which a crash test or a
candidate's own `kill` would otherwise not end).

Each step that the OS refuses is left out, never faked: the evaluator measures what a child got
from outside (isolation.py) and reports that, not what was asked.

The module stays whole (about 450 lines): its steps are one procedure, run in this order in one
forked child before the candidate is imported, over the same raw system-call wrappers and constants.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import glob
import os
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path

from evaluator.gpu_node import is_gpu_node

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
CLONE_NEWCGROUP = 0x02000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
MNT_DETACH = 0x2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 1, 4, 24
PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
SYS_PIVOT_ROOT, SYS_CAPSET = 155, 126  # x86_64
LINUX_CAPABILITY_VERSION_3 = 0x20080522
NAMESPACES = ("user", "pid", "mnt", "net", "ipc", "uts")
# Bits of statvfs's f_flag that a bind mount keeps when it is made read-only: the kernel refuses to
# clear them on a mount copied from a more privileged namespace.
KEPT_FLAGS = {os.ST_NOSUID: MS_NOSUID, os.ST_NODEV: MS_NODEV, os.ST_NOEXEC: MS_NOEXEC,
              getattr(os, "ST_NOATIME", 1024): 1024, getattr(os, "ST_NODIRATIME", 2048): 2048,
              getattr(os, "ST_RELATIME", 4096): 1 << 21}
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys")
DEVICES = ("null", "zero", "full", "random", "urandom")
DEVICE_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
                "stderr": "/proc/self/fd/2"}
GPU_DEVICES = ("/dev/nvidia*", "/dev/nvidia-caps/*", "/dev/dri/*")
TMPFS_SIZES = {"/tmp": "512m", "/dev/shm": "64m"}
# Folders never made visible whole, even when on Python's path (a script's folder, PYTHONPATH): the
# confined process has its own /tmp, /dev and /proc, and home folders hold what it must not read.
NEVER_WHOLE = frozenset({"/", "/tmp", "/var/tmp", "/dev", "/dev/shm", "/proc", "/run", "/var", "/home", "/root"})
# System calls a kernel's host code never needs; each is refused with EPERM.
REFUSED_SYSCALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "setns", "unshare", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsmount", "fsconfig", "fspick", "mount_setattr", "name_to_handle_at", "open_by_handle_at",
    "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon",
    "swapoff", "syslog", "acct", "quotactl", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "iopl", "ioperm", "personality", "lookup_dcookie", "vhangup", "setdomainname", "sethostname",
)
SANDBOX_UID = int(os.environ.get("AGENTLOOP_SANDBOX_UID", "65534"))  # used only when the evaluator is root

_libc = ctypes.CDLL(None, use_errno=True)


class ConfinementError(OSError):
    """A step of the confinement failed where it must not (it would leave a half-built root)."""


@dataclass(frozen=True)
class View:
    """What a confined process may see beyond the system: folders by their paths outside."""

    writable: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()
    emptied: tuple[str, ...] = ()  # folders inside visible ones that are seen empty


@dataclass
class Applied:
    """What the process got, as the process itself saw it (the evaluator measures it again)."""

    namespaces: list[str] = field(default_factory=list)
    root: bool = False  # a fresh root of allowlisted paths
    unprivileged: bool = False
    seccomp: bool = False
    refused: list[str] = field(default_factory=list)  # steps the OS refused, with why


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise ConfinementError(code, f"{what}: {os.strerror(code)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(),
                       ctypes.c_ulong(flags), data and data.encode()), f"mount {target}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


# -- namespaces -----------------------------------------------------------------------------------
def _unshare_user(applied: Applied) -> bool:
    """Not root: a user namespace of its own, where this process keeps its uid and gets the rights
    to make the other namespaces. False where the OS refuses one."""
    uid, gid = os.geteuid(), os.getegid()
    if _libc.unshare(CLONE_NEWUSER) != 0:
        applied.refused.append(f"user namespace ({os.strerror(ctypes.get_errno())})")
        return False
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    applied.namespaces.append("user")
    return True


def _unshare_others(applied: Applied) -> None:
    for name, flag in (("mnt", CLONE_NEWNS), ("pid", CLONE_NEWPID), ("net", CLONE_NEWNET), ("ipc", CLONE_NEWIPC),
                       ("uts", CLONE_NEWUTS)):
        if _libc.unshare(flag) == 0:
            applied.namespaces.append(name)
        else:
            applied.refused.append(f"{name} namespace ({os.strerror(ctypes.get_errno())})")


def _wait_for(pid: int) -> int:
    """The raw wait status of `pid`, ignoring the signals a terminal would send meanwhile."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(number, signal.SIG_IGN)
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue
        except ChildProcessError:
            return 70 << 8


def _exit_as(status: int) -> None:
    """Ends this process as the one whose wait status is `status` ended (its signal too)."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 70)


def _outer_waits(child: int, statuses: int) -> None:
    """The process left outside the new PID namespace: ends as the candidate's process ended (the
    namespace's first process reports that through the pipe `statuses`; it cannot end by a signal
    of its own choosing, as the first process of a namespace ignores its own signals)."""
    status = _wait_for(child)
    reported = os.read(statuses, 4)
    _exit_as(int.from_bytes(reported, "little") if len(reported) == 4 else status)


def _init_waits(child: int, statuses: int) -> None:
    """The first process of the new PID namespace: reaps whatever the candidate leaves behind until
    the candidate's process ends, then ends too, and with it every process still in the namespace."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            status = 70 << 8
            break
        if pid == child:
            break
    os.write(statuses, status.to_bytes(4, "little"))
    os._exit(0)


# -- the confined process's half: its root -----------------------------------------------------------
TOOL_PATH_VARIABLES = ("LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "TRITON_PTXAS_PATH", "TRITON_CUOBJDUMP_PATH",
                       "TRITON_NVDISASM_PATH", "TRITON_CUDACRT_PATH", "TRITON_CUDART_PATH", "TRITON_LIBDEVICE_PATH")


def _system_paths() -> list[str]:
    """Read-only paths that Python, torch, Triton, the compilers Triton calls and the GPU driver need."""
    package = os.path.dirname(os.path.abspath(__file__))  # the worker's own code, not the project around it
    paths = [*SYSTEM_PATHS, sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable), package]
    paths += [p for p in sys.path if p and os.path.isabs(p) and os.path.normpath(p) != os.path.dirname(package)]
    paths += _tool_paths() + _loaded_package_roots()
    hidden = {*NEVER_WHOLE, os.path.expanduser("~")}
    return [p for p in dict.fromkeys(os.path.normpath(p) for p in paths)
            if os.path.exists(p) and p not in hidden and not holds_task_suite(p)]


def _tool_paths() -> list[str]:
    """The absolute paths the environment names for the CUDA libraries and Triton's tools."""
    return [p for name in TOOL_PATH_VARIABLES for p in os.environ.get(name, "").split(os.pathsep) if os.path.isabs(p)]


def _loaded_package_roots() -> list[str]:
    """Where torch, Triton and numpy were imported from."""
    files = (getattr(sys.modules.get(module), "__file__", None) for module in ("torch", "triton", "numpy"))
    return [os.path.dirname(os.path.dirname(file)) for file in files if file]


def holds_task_suite(path: str) -> bool:
    """A checkout of this project (its tasks and their reference solutions beside the evaluator),
    as Python's path may name one that is not the evaluator's own (an editable install elsewhere)."""
    return os.path.isdir(os.path.join(path, "tasks")) and os.path.isfile(os.path.join(path, "evaluator", "task.py"))


def installed_suites(paths: list[str]) -> list[str]:
    """The task suites a wheel installs inside an evaluator package (evaluator/_tasks), this one's
    or another install's among `paths`, which a confined process sees empty: the references and
    reference solutions are not the candidate's."""
    own = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    suites = (os.path.join(p, "evaluator", "_tasks") for p in (own, *paths))
    return [p for p in dict.fromkeys(suites) if os.path.isdir(p)]


def _inside(new_root: str, path: str) -> str:
    return new_root + path


def _materialize(new_root: str, path: str, made: set[str], last_is_dir: bool = False) -> str:
    """Creates `path`'s folders in the new root, recreating symbolic links among them as links (and
    materializing their targets); the last component only if `last_is_dir`. Returns the real path."""
    current = "/"
    parts = Path(path).parts[1:]
    for k, part in enumerate(parts):
        candidate = os.path.join(current, part)
        last = k == len(parts) - 1
        if os.path.islink(candidate):
            target = os.readlink(candidate)
            if candidate not in made and not os.path.lexists(_inside(new_root, candidate)):
                os.symlink(target, _inside(new_root, candidate))
            made.add(candidate)
            current = _materialize(new_root, os.path.normpath(os.path.join(current, target)), made,
                                   last_is_dir or not last)
            continue
        current = candidate
        if (last_is_dir or not last) and not os.path.lexists(_inside(new_root, current)):
            os.mkdir(_inside(new_root, current))
    return current


def _bind(new_root: str, source: str, writable: bool, made: set[str], bound: list[str]) -> None:
    """Makes `source` visible at its own path, read-only unless `writable`."""
    real = _materialize(new_root, source, made)
    if not writable and any(real == b or real.startswith(b.rstrip("/") + "/") for b in bound):
        return  # already visible through a folder bound before
    target = _inside(new_root, real)
    if os.path.isdir(real):
        os.makedirs(target, exist_ok=True)
    elif not os.path.lexists(target):
        open(target, "w").close()
    _mount(real, target, None, MS_BIND | MS_REC)
    kept = os.statvfs(real).f_flag
    flags = MS_BIND | MS_REMOUNT | MS_NOSUID | (0 if writable else MS_RDONLY)
    for bit, flag in KEPT_FLAGS.items():
        if kept & bit:
            flags |= flag
    _mount(None, target, None, flags)
    bound.append(real)


def _devices(new_root: str, gpu: bool, gpu_node: str | None = None) -> None:
    dev = _inside(new_root, "/dev")
    os.makedirs(dev, exist_ok=True)
    _mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
    nodes = [f"/dev/{name}" for name in DEVICES]
    if gpu:
        nodes += gpu_nodes(gpu_node)
    for node in nodes:
        if not os.path.exists(node) or os.path.isdir(node):
            continue
        target = _inside(new_root, node)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "w").close()
        _mount(node, target, None, MS_BIND)
    for name, target in DEVICE_LINKS.items():
        os.symlink(target, os.path.join(dev, name))
    for path, size in TMPFS_SIZES.items():
        os.makedirs(_inside(new_root, path), exist_ok=True)
        _mount("tmpfs", _inside(new_root, path), "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={size}")


def _pivot(new_root: str) -> None:
    old = _inside(new_root, "/.old-root")
    os.mkdir(old)
    _check(_libc.syscall(SYS_PIVOT_ROOT, new_root.encode(), old.encode()), "pivot_root")
    os.chdir("/")
    _check(_libc.umount2(b"/.old-root", MNT_DETACH), "umount the old root")
    os.rmdir("/.old-root")


def gpu_nodes(own: str | None) -> list[str]:
    """The GPU device nodes a confined process gets: the driver's shared ones and, of the GPUs' own
    nodes, `own` alone (every GPU's where `own` is None)."""
    found = [path for pattern in GPU_DEVICES for path in sorted(glob.glob(pattern))]
    return [path for path in found if own is None or not is_gpu_node(path) or path == own]


def _build_root(scratch: str, view: View, gpu: bool, gpu_node: str | None = None) -> None:
    """A fresh root in a tmpfs mounted inside the scratch folder (private to this mount namespace)."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    new_root = os.path.join(scratch, ".root")
    os.makedirs(new_root, exist_ok=True)
    _mount("tmpfs", new_root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")
    made: set[str] = set()
    bound: list[str] = []
    _devices(new_root, gpu, gpu_node)  # first: the evaluation's own folders may lie in /dev/shm or /tmp
    system = _system_paths()
    for path in sorted(system, key=len):
        _bind(new_root, path, False, made, bound)
    for path in view.readable:
        if os.path.lexists(path):
            _bind(new_root, path, False, made, bound)
    for path in (scratch, *view.writable):
        if os.path.lexists(path):  # a missing one stays missing: binding it would leave the root half-built
            _bind(new_root, path, True, made, bound)
    for path in (*view.emptied, *installed_suites([*system, *view.readable])):
        if os.path.isdir(_inside(new_root, path)):
            _mount("tmpfs", _inside(new_root, path), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k")
    proc = _inside(new_root, "/proc")
    os.makedirs(proc, exist_ok=True)
    _mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _pivot(new_root)
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)  # the folders bound in keep theirs
    os.chdir(scratch)


# -- the confined process's half: privileges ------------------------------------------------------------
class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_bounding_set() -> None:
    """No capability to regain through exec (needs CAP_SETPCAP, so done before any change of uid)."""
    path = "/proc/sys/kernel/cap_last_cap"
    last = int(Path(path).read_text()) if os.path.exists(path) else 40
    for cap in range(last + 1):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)


def _become_sandbox_user(applied: Applied) -> None:
    """As root: the dedicated sandbox uid, in no group but its own (and the GPU devices' groups, so
    that devices open only to a group stay usable). Leaving uid 0 clears every capability."""
    try:
        groups = sorted({os.stat(path).st_gid for pattern in GPU_DEVICES for path in glob.glob(pattern)} - {0})
        os.setgroups(groups)
        os.setresgid(SANDBOX_UID, SANDBOX_UID, SANDBOX_UID)
        os.setresuid(SANDBOX_UID, SANDBOX_UID, SANDBOX_UID)
    except OSError as exc:
        applied.refused.append(f"sandbox user ({exc})")


def _drop_privileges() -> bool:
    """No capability in any set, and no new privileges ever (exec of a setuid binary included)."""
    header, data = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    capset = _libc.syscall(SYS_CAPSET, ctypes.byref(header), ctypes.byref(data)) == 0
    nnp = _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
    return capset and nnp


def _load_seccomp(applied: Applied) -> None:
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError, RuntimeError) as exc:  # the bindings, or libseccomp itself, missing
        applied.refused.append(f"seccomp (libseccomp unavailable: {exc})")
        return
    refusal = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in REFUSED_SYSCALLS:
        try:
            refusal.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (OSError, ValueError, RuntimeError):
            continue  # not a system call on this architecture
    # New namespaces through clone as well, whatever the combination of flags.
    for flag in (CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP):
        refusal.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    refusal.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")  # its flags are out of reach: libc falls back to clone
    try:
        refusal.load()
    except OSError as exc:
        applied.refused.append(f"seccomp ({exc})")
        return
    applied.seccomp = True


# -- the whole ---------------------------------------------------------------------------------------------
def confine(scratch: str, view: View, gpu: bool, gpu_node: str | None = None) -> Applied:
    """Confines this (single-threaded, freshly forked) process. Returns in the confined process, with
    the working directory `scratch`. With a new PID namespace the calling process never returns: it
    waits outside the namespace and ends as the confined process does.

    As root, the namespaces need no user namespace, and the confined process becomes the sandbox's
    own uid once its root is built (so what it reads and writes is also held to that uid's rights);
    otherwise a user namespace grants the rights to build it, and the evaluator's uid is kept."""
    applied = Applied()
    as_root = os.geteuid() == 0
    if not as_root and not _unshare_user(applied):
        applied.unprivileged = _drop_privileges()
        _load_seccomp(applied)
        return applied
    _unshare_others(applied)
    own_pids = {"pid", "mnt"} <= set(applied.namespaces)
    if own_pids:
        statuses_read, statuses_write = os.pipe()
        first = os.fork()
        if first != 0:
            os.close(statuses_write)
            _outer_waits(first, statuses_read)
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        try:
            _build_root(scratch, view, gpu, gpu_node)
            applied.root = True
        except OSError as exc:
            applied.refused.append(f"fresh root ({exc})")
    _drop_bounding_set()
    if as_root:
        _become_sandbox_user(applied)
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # a change of uid clears it
    applied.unprivileged = _drop_privileges() and os.geteuid() != 0
    _load_seccomp(applied)
    if own_pids:
        candidate = os.fork()
        if candidate != 0:
            _init_waits(candidate, statuses_write)
        os.close(statuses_write)
        os.close(statuses_read)
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    return applied


def unprivileged_in_place() -> Applied:
    """What can be applied without namespaces, for a process that a profiler must still reach (Nsight
    Compute's injected library talks to its front end through the file system and IPC): the sandbox's
    uid as root, no capabilities, no-new-privileges, the seccomp filter."""
    applied = Applied()
    with contextlib.suppress(ImportError, OSError, RuntimeError):
        import pyseccomp  # noqa: F401 - loaded while this process can still read every library
    _drop_bounding_set()
    if os.geteuid() == 0:
        _become_sandbox_user(applied)
    applied.unprivileged = _drop_privileges() and os.geteuid() != 0
    _load_seccomp(applied)
    return applied
