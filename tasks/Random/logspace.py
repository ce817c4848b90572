"""Points spaced evenly on a log scale: base ** (evenly spaced exponents). Deterministic."""

import math

import torch

from evaluator.task import DEVICE, Cost, Inputs, Task, pick


def reference(start, end, steps, base=10.0, dtype=None, layout=torch.strided, device=None,
              requires_grad=False):
    return torch.logspace(start, end, steps, base=base, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


# (start, end, steps, base) per (size, seed, mode). There are no tensor inputs; outlier mode picks
# wide exponent ranges whose ends underflow or overflow half precision. Edge cases: one step, a
# descending range with a base below 1, two steps. The standard size has one configuration, so
# the seeds that rotate during timing share it.
CASES = {
    ("small", "standard"): [(-3.0, 3.0, 4000, 10.0), (0.0, 12.0, 3001, 2.0)],
    ("small", "outlier"): [(-12.0, 12.0, 4096, 10.0), (-30.0, 30.0, 2999, 2.0)],
    ("edge", "standard"): [(2.0, -1.5, 1, 10.0), (5.0, -5.0, 1001, 0.5)],
    ("edge", "outlier"): [(-0.25, 40.0, 2, 3.0), (7.5, -7.5, 999, math.e)],
    ("standard", "standard"): [(-10.0, 10.0, 67108864, 10.0)],
    ("standard", "outlier"): [(-10.0, 10.0, 67108864, 10.0)],
}


def make_inputs(seed, size, mode, dtype):
    pick(size, small=None, standard=None, edge=None)  # validates the size name
    cases = CASES[(size, mode)]
    start, end, steps, base = cases[seed % len(cases)]
    return Inputs((start, end, steps), {"base": base, "dtype": dtype, "device": DEVICE})


def cost(inputs):
    steps = inputs.args[2]
    dtype = inputs.kwargs.get("dtype") or torch.float32
    return Cost(flops=3 * steps, bytes=steps * dtype.itemsize)


TASK = Task(
    id="Random/logspace",
    difficulty=1,
    entry="logspace",
    signature=("logspace(start, end, steps, base=10.0, dtype=None, layout=torch.strided, "
               "device=None, requires_grad=False)"),
    kernelbenchx_signature=("logspace(start, end, steps, base=10.0, *, out=None, dtype=None, "
                            "layout=torch.strided, device=None, requires_grad=False)"),
    description=(
        "Return a new 1-D tensor of `steps` values base ** e_i, where the exponents e_i run evenly from `start` "
        "to `end` inclusive: e_i = start + i * (end - start) / (steps - 1), and a single step gives "
        "base ** start. `start`, `end` and `base` (> 0) are Python floats (end may be below start, base below "
        "1), `steps` is a Python int >= 1; the result has dtype `dtype` (float32 when None) on `device`, "
        "with values that overflow the dtype becoming inf. Nothing is random: compute the powers in float32 "
        "(e.g. exp2(e * log2(base))); the remaining keyword arguments keep their defaults."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
