"""ReLU, optionally in place."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, inplace=False):
    return torch.nn.functional.relu(input, inplace=inplace)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shape = pick(size, small=((33, 257), (4, 9, 130))[seed % 2], standard=(8192, 8192),
                 edge=((3, 1001), (5, 1, 17))[seed % 2])
    # odd seeds of the small and edge sizes overwrite the input; the timed configuration does not
    inplace = bool(seed % 2) and size != "standard"
    return Inputs((randn(shape, gen, dtype, mode),), {"inplace": inplace})


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=x.numel(), bytes=2 * element_bytes(x))


TASK = Task(
    id="Activation/relu",
    difficulty=2,
    entry="relu",
    signature="relu(input, inplace=False)",
    description=(
        "Rectified linear unit, element by element: every negative entry of `input` becomes 0 and every other "
        "entry is kept, for a tensor of any shape. With inplace=False return a new tensor of the same shape and "
        "dtype and leave `input` untouched; with inplace=True write the results into `input` itself and return "
        "that same tensor object. Both modes are exercised, and the final contents of `input` are checked."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    mutates=(0,),
)
