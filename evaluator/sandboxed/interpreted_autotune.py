"""@triton.autotune under Triton's CPU interpreter, which has no GPU driver to time configs with.

Nothing can be timed there, so an autotuned kernel runs one config (after the kernel's own pruning):
the one whose grid has the fewest programs, since the interpreter's cost grows with the number of
programs, not with their size (the first config where the grid is not a function of the config).
The verdict on the CPU judges the kernel's results, as with any other kernel.
"""

from __future__ import annotations

import math


def one_config() -> None:
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:  # pragma: no cover - triton always has it
        return
    prune = Autotuner.prune_configs
    if getattr(prune, "_one_config", False):
        return

    def prune_configs(tuner, kwargs, *rest):
        configs = prune(tuner, kwargs, *rest)
        grid = kwargs.get("grid")
        if callable(grid) and len(configs) > 1:
            configs = sorted(configs, key=lambda config: _programs(grid, tuner, kwargs, config))
        return configs[:1]

    def bench(tuner, *args, config, **meta):
        return [0.0, 0.0, 0.0]

    prune_configs._one_config = True  # type: ignore[attr-defined]
    Autotuner.prune_configs = prune_configs
    Autotuner._bench = bench


def _programs(grid, tuner, kwargs, config) -> float:
    try:
        dims = grid({**getattr(tuner, "nargs", {}), **kwargs, **config.all_kwargs()})
        return math.prod(int(d) for d in dims)
    except Exception:  # noqa: BLE001 - the candidate's grid; it fails again, and is reported, at launch
        return math.inf
