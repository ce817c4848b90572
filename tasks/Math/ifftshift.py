"""Inverse FFT shift: roll the chosen dimensions so that the zero-frequency entry returns to index 0."""

import torch

from evaluator.contracts import Exact
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, dim=None):
    return torch.fft.ifftshift(input, dim=dim)


# (shape, dim) per (size, seed): all dimensions (None), one int, tuples with negative entries,
# odd and even lengths and a size-1 dimension. The standard size has one configuration.
CASES = {
    "small": [((6, 37, 50), None), ((16, 50, 24), 1)],
    "edge": [((1001,), None), ((3, 1, 5, 9), (0, -1))],
    "standard": [((16, 2048, 2048), (-2, -1))],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dim = cases[seed % len(cases)]
    return Inputs((randn(shape, gen, dtype, mode),), {"dim": dim})


def cost(inputs):
    (x,) = inputs.args
    return Cost(flops=0, bytes=2 * element_bytes(x))


TASK = Task(
    id="Math/ifftshift",
    difficulty=4,
    entry="ifftshift",
    signature="ifftshift(input, dim=None)",
    description=(
        "Return a new tensor (same shape and dtype as `input`, which has 1 to 4 dimensions) in which every "
        "dimension d listed in `dim` is rolled left by n // 2 places, n being its length: "
        "out[..., i, ...] = input[..., (i + n // 2) % n, ...] along d. `dim` is None (all dimensions), an "
        "int, or a tuple of ints, negative values counting from the end; other dimensions are unchanged. "
        "This undoes fftshift also for odd lengths; values are only moved and are compared exactly."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Exact(),
)
