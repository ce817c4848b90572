"""@triton.autotune under Triton's CPU interpreter, which has no GPU driver to time configs with.

Nothing can be timed there, so an autotuned kernel runs its first config (after the kernel's own
pruning): the verdict on the CPU judges the kernel's results, as with any other kernel.
"""

from __future__ import annotations


def first_config_only() -> None:
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:  # pragma: no cover - triton always has it
        return
    prune = Autotuner.prune_configs
    if getattr(prune, "_first_config_only", False):
        return

    def prune_configs(tuner, kwargs, *rest):
        return prune(tuner, kwargs, *rest)[:1]

    def bench(tuner, *args, config, **meta):
        return [0.0, 0.0, 0.0]

    prune_configs._first_config_only = True  # type: ignore[attr-defined]
    Autotuner.prune_configs = prune_configs
    Autotuner._bench = bench
