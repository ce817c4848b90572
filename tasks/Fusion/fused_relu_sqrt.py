"""ReLU (optionally written back into the input), then the square root."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, inplace=False, out=None):
    rectified = torch.nn.functional.relu(input, inplace=inplace)
    return torch.sqrt(rectified, out=out)


# Per (size, seed): (shape, inplace). Odd seeds of the small and edge sizes rectify the input in
# place; the timed standard configuration does not.
CASES = {
    "small": [((33, 257), False), ((4, 9, 130), True)],
    "edge": [((3, 1001), False), ((5, 1, 17), True)],
    "standard": [((8192, 8192), False)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, inplace = cases[seed % len(cases)]
    return Inputs((randn(shape, gen, dtype, mode, scale=2.0, shift=0.5),), {"inplace": inplace})


def cost(inputs):
    (x,) = inputs.args
    written = element_bytes(x) if inputs.kwargs.get("inplace", False) else 0
    return Cost(flops=2 * x.numel(), bytes=2 * element_bytes(x) + written)


TASK = Task(
    id="Fusion/fused_relu_sqrt",
    difficulty=2,
    entry="fused_relu_sqrt",
    signature="fused_relu_sqrt(input, inplace=False, out=None)",
    description=(
        "Return sqrt(max(x, 0)) for every element x of `input` (any shape) as a new tensor of the input's "
        "shape and dtype, so negative entries give 0. With inplace=True the rectification is also stored into "
        "`input` itself: afterwards `input` holds max(x, 0) (not the square root), and its final contents are "
        "checked; with inplace=False `input` must stay untouched. `out` is always None. Compute in float32 "
        "for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    mutates=(0,),
)
