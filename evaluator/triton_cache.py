"""Triton's cache for processes that run candidate code: private to one evaluation, over a
read-only layer of driver stubs that a trusted process built.

Each evaluation's processes (its candidate's, its compile scout) share a Triton cache of their own,
so nothing a candidate compiled, or wrote in the cache's place, reaches another candidate. Without
more, each of them would compile Triton's C helper for the CUDA driver (`cuda_utils`, about 0.2 s of
gcc) anew. That helper is built once from Triton's own source by a child of the fork server, which
runs no candidate code, into a folder that candidates see read-only (`stubs`): a lookup that misses
the private cache is answered from there, and only with a regular file."""

from __future__ import annotations

import os
import stat
import sys
from typing import Callable

from triton.runtime.cache import FileCacheManager

STUBS_VARIABLE = "AGENTLOOP_TRITON_STUBS"
KEY_VARIABLE = "AGENTLOOP_TRITON_KEY"
MANAGER = f"{__name__}:LayeredCacheManager"


class LayeredCacheManager(FileCacheManager):
    """Triton's file cache (the private one, TRITON_CACHE_DIR), falling back to the trusted stubs."""

    def get_file(self, filename):
        found = super().get_file(filename)
        if found is not None:
            return found
        stubs = os.environ.get(STUBS_VARIABLE)
        if not stubs:
            return None
        path = os.path.join(stubs, self.key, filename)
        try:
            return path if stat.S_ISREG(os.lstat(path).st_mode) else None
        except OSError:
            return None


def use_layers(private: str, stubs: str | None) -> None:
    """In a process about to run candidate code: its Triton cache is `private` over `stubs`."""
    os.environ["TRITON_CACHE_DIR"] = private
    os.environ["TRITON_CACHE_MANAGER"] = MANAGER
    if stubs:
        os.environ[STUBS_VARIABLE] = stubs
    else:
        os.environ.pop(STUBS_VARIABLE, None)


def build_stubs(stubs: str) -> None:
    """In a trusted throwaway process: Triton's driver helper compiled into `stubs` (CUDA is
    initialized on the way, which is why the fork server does this in a child of its own)."""
    os.environ["TRITON_CACHE_DIR"] = stubs
    os.environ.pop("TRITON_CACHE_MANAGER", None)
    from triton.runtime import driver

    driver.active.utils  # noqa: B018 - compiling it is the point


def _key_function() -> Callable[[], str] | None:
    """Triton's own key (a hash of its sources and its compiler library), where this Triton keeps it."""
    try:
        from triton.runtime.cache import triton_key
    except ImportError:
        try:
            from triton.compiler.compiler import triton_key
        except ImportError:
            return None
    return triton_key


def own_key() -> str | None:
    """Triton's key, hashed at the first call in a process (0.4 s) and remembered after."""
    function = _key_function()
    return function() if function is not None else None


def reuse_key(key: str) -> int:
    """In a process started afresh rather than forked (the memory check's, which Compute Sanitizer
    starts), Triton's key as the fork server hashed it, instead of hashing Triton again: every
    Triton module that holds the key function gets one that returns `key`. The number replaced.
    The key only names entries of the process's own cache; a wrong one would make it compile again."""
    function = _key_function()
    if function is None:
        return 0
    replaced = 0
    for name, module in list(sys.modules.items()):
        if (name == "triton" or name.startswith("triton.")) and getattr(module, "triton_key", None) is function:
            module.triton_key = lambda: key
            replaced += 1
    return replaced
