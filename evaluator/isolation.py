"""What a sandboxed process runs under, measured from outside by the evaluator through /proc: its
namespaces, its root, its uid, seccomp, no-new-privileges and capabilities (not what it was asked
to get)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from evaluator.confinement import NAMESPACES


@dataclass(frozen=True)
class Measured:
    namespaces: tuple[str, ...]  # of NAMESPACES, those the process does not share with the evaluator
    own_root: bool  # a root folder other than the evaluator's (the fresh root of confinement.py)
    own_uid: bool  # another uid than the evaluator's (as root: the sandbox's own), or a user namespace
    seccomp: bool
    no_new_privs: bool
    capabilities: bool  # any effective or permitted capability, or a bounding set that is not empty
    uid: int

    @property
    def level(self) -> str:
        missing = [f"{name} namespace" for name in NAMESPACES[1:] if name not in self.namespaces]
        if not self.own_root:
            missing.append("root of its own")
        if not self.own_uid:
            missing.insert(0, "user of its own")
        if not self.seccomp:
            missing.append("seccomp")
        if not self.no_new_privs or self.capabilities:
            missing.append("privileges dropped")
        return "full" if not missing else "partial (no " + ", no ".join(missing) + ")"


def _status_fields(pid: int) -> dict[str, str]:
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def measured(pid: int) -> Measured | None:
    """What the process `pid` runs under, read from /proc by the evaluator; None once it is gone."""
    try:
        fields = _status_fields(pid)
        own = {name: os.readlink(f"/proc/self/ns/{name}") for name in NAMESPACES}
        apart = tuple(name for name in NAMESPACES if os.readlink(f"/proc/{pid}/ns/{name}") != own[name])
        own_root = _root_apart(pid)
    except OSError:
        return None
    caps = any(int(fields.get(key, "0"), 16) for key in ("CapEff", "CapPrm", "CapBnd"))
    uid = int(fields.get("Uid", "0").split()[0])
    return Measured(namespaces=apart, own_root=own_root, own_uid="user" in apart or uid != os.geteuid(),
                    seccomp=fields.get("Seccomp", "0") == "2", no_new_privs=fields.get("NoNewPrivs", "0") == "1",
                    capabilities=caps, uid=uid)


def _root_apart(pid: int) -> bool:
    """The process's root folder is not the evaluator's; False where the evaluator may not look
    (then it is not counted as there). Raises OSError once the process is gone, as the other
    readings do."""
    try:
        theirs = os.stat(f"/proc/{pid}/root/")
    except PermissionError:
        return False
    ours = os.stat("/")
    return (theirs.st_dev, theirs.st_ino) != (ours.st_dev, ours.st_ino)


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listing:
            return [int(c) for c in listing.read().split()]
    except (OSError, ValueError):
        return []


def confined_process(pid: int) -> int:
    """The process that runs the candidate: `pid` itself, or, where `pid` waits outside a new PID
    namespace, the child of that namespace's first process."""
    try:
        first = _children(pid)[0]
        if os.readlink(f"/proc/{first}/ns/pid") == os.readlink(f"/proc/{pid}/ns/pid"):
            return pid
        return (_children(first) or [first])[0]
    except (IndexError, OSError):
        return pid
