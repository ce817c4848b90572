"""How often the statistical checks of random ops fail correct generators: torch.rand and a
Triton-style rounding of it to each dtype's grid, over many seeds, shapes and dtypes, each output
alone and each pair of calls (the tests run eight seeds of this; this runs as many as asked).

    python benchmarks/randomness_false_failures.py [--seeds 50] [--first 1000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from evaluator.randomness import independent_runs, uniform_checks  # noqa: E402
from tests.evaluator.test_randomness import HALF, SHAPES, rounded_like_triton  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--first", type=int, default=1000)
    args = parser.parse_args()
    outputs, failures, began = 0, [], time.perf_counter()
    for seed in range(args.first, args.first + args.seeds):
        gen = torch.Generator().manual_seed(seed)
        for shape in SHAPES:
            for dtype in (torch.float32, *HALF):
                for name, make in (("torch.rand", lambda: torch.rand(shape, generator=gen, dtype=dtype)),
                                   ("rounded", lambda: rounded_like_triton(shape, dtype, gen))):
                    runs = [make(), make()]
                    outputs += 1
                    for sentence in uniform_checks(runs[0], dtype=dtype, shape=shape) + independent_runs(runs, 0.0, 1.0):
                        failures.append(f"seed {seed} {shape} {dtype} {name}: {sentence}")
    print(f"{outputs} outputs (pairs of calls), {len(failures)} failures, {time.perf_counter() - began:.0f} s "
          f"(torch {torch.__version__})")
    print("\n".join(failures))


if __name__ == "__main__":
    main()
