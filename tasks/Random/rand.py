"""Uniform random numbers on [0, 1), judged statistically (never against torch's random stream)."""

import torch

from evaluator.contracts import Statistical
from evaluator.randomness import distinct_runs, independent_runs, uniform_checks
from evaluator.task import DEVICE, Allowance, Cost, Inputs, Task, pick


def reference(*size, generator=None, out=None, dtype=None, layout=torch.strided, device=None,
              requires_grad=False, pin_memory=False):
    return torch.rand(*size, generator=generator, out=out, dtype=dtype, layout=layout, device=device,
                      requires_grad=requires_grad, pin_memory=pin_memory)


SHAPES = {
    "small": ((64, 1000), (16, 3, 513), (40001,), (32, 1024)),
    "edge": ((1,), (3, 1001), (2, 1, 17, 5), (4097,)),
    "standard": ((8192, 8192), (64, 1024, 1000), (67108864,), (4096, 16384)),
}


def make_inputs(seed, size, mode, dtype):
    # No tensor inputs: the case is the shape (mode and seed only pick among shapes) and the dtype.
    shape = pick(size, **{k: v[seed % 2 + 2 * (mode == "outlier")] for k, v in SHAPES.items()})
    return Inputs(tuple(shape), {"dtype": dtype, "device": DEVICE})


def check(inputs, runs):
    shape = tuple(inputs.args)
    dtype = inputs.kwargs.get("dtype") or torch.get_default_dtype()
    failures = []
    for i, run in enumerate(runs):
        for sentence in uniform_checks(run, 0.0, 1.0, dtype=dtype, shape=shape):
            failures.append(f"call {i + 1}: {sentence}")
    failures += distinct_runs(runs)
    return failures or independent_runs(runs, 0.0, 1.0)


def cost(inputs):
    numel = 1
    for s in inputs.args:
        numel *= s
    dtype = inputs.kwargs.get("dtype") or torch.float32
    return Cost(flops=0, bytes=numel * dtype.itemsize)


TASK = Task(
    id="Random/rand",
    difficulty=2,
    entry="rand",
    signature=("rand(*size, generator=None, out=None, dtype=None, layout=torch.strided, device=None, "
               "requires_grad=False, pin_memory=False)"),
    kernelbenchx_signature=("rand(*size, *, generator=None, out=None, dtype=None, layout=torch.strided, "
                            "device=None, requires_grad=False, pin_memory=False)"),
    description=(
        "Return a new contiguous tensor of shape `size` (given as separate ints) with independent samples from "
        "the uniform distribution on [0, 1) (1 excluded, also after rounding to a half-precision `dtype`), of "
        "the given `dtype` (float32 when None) on `device`. Every call must draw fresh numbers: take a new seed "
        "on the host on each call with torch.randint(0, 2**31 - 1, (1,)).item() and generate in the kernel "
        "(e.g. tl.rand(seed, offsets) with distinct offsets per element). The output is judged by statistical "
        "tests (uniformity, mean and variance, no repeated blocks, independence between elements, blocks, halves "
        "and calls), not against torch's random numbers; the other keyword arguments keep their defaults."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Statistical(check=check, draws_alone=True),
    allowed=(Allowance(api="torch.randint", aten=("randint",),
                       why="draw a fresh seed on the host for the kernel's own random stream"),),
)
