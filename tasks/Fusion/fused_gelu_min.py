"""GELU, then the minimum over one dimension (values and their positions) or over all elements."""

import torch

from evaluator.task import OUTLIER_FACTOR, OUTLIER_FRACTION, Cost, Inputs, Task, generator, pick


def reference(input, approximate="none", dim=None, keepdim=False, out=None):
    g = torch.nn.functional.gelu(input, approximate=approximate)
    if dim is None:
        return torch.min(g)
    values, indices = torch.min(g, dim=dim, keepdim=keepdim)
    return values, indices


# (shape, dim, keepdim, approximate) per (size, seed): a middle dim, the last dim kept, every element
# (dim=None: one 0-dim value), a size-1 dim. The standard size has one configuration.
CASES = {
    "small": [((8, 30, 50), 1, False, "none"), ((40, 64), -1, True, "tanh")],
    "edge": [((3, 1, 1001), None, False, "tanh"), ((5, 1, 17), -2, True, "none")],
    "standard": [((64, 1024, 1024), -1, False, "none")],
}


def make_inputs(seed, size, mode, dtype):
    """Inputs whose minimum of GELU is unique in every slice, by a wide margin in every dtype.

    GELU has a flat minimum (about -0.17 near x = -0.75), where nearby inputs tie once rounded, so the
    position of the minimum would be ill-defined. The background avoids x in (-1.4, -0.25) (GELU >= -0.114
    there), and each reduced slice gets one planted value in [-0.8, -0.7] (GELU about -0.17), which is
    never the smallest input of its slice, so GELU and min do not commute.
    """
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dim, keepdim, approximate = cases[seed % len(cases)]
    x = torch.randn(shape, generator=gen) * 1.5
    x = torch.where((x > -1.4) & (x < -0.25), -x, x)
    if mode == "outlier":
        flat = x.reshape(-1)
        count = max(1, round(flat.numel() * OUTLIER_FRACTION))
        flat[torch.randint(0, flat.numel(), (count,), generator=gen)] *= OUTLIER_FACTOR
    planted = -0.8 + 0.1 * torch.rand(shape, generator=gen)
    if dim is None:
        x.reshape(-1)[torch.randint(0, x.numel(), (1,), generator=gen)] = planted.reshape(-1)[0]
    else:
        d = dim % len(shape)
        moved = x.movedim(d, -1)  # a view: planting into it plants into x
        where = torch.randint(0, shape[d], moved.shape[:-1] + (1,), generator=gen)
        moved.scatter_(-1, where, planted.movedim(d, -1).gather(-1, where))
    kwargs = {"approximate": approximate, "dim": dim, "keepdim": keepdim}
    return Inputs((x.to(dtype),), kwargs)


def cost(inputs):
    (x,) = inputs.args
    dim = inputs.kwargs.get("dim")
    if dim is None:
        out_bytes = x.element_size()
    else:
        out_numel = x.numel() // x.shape[dim]
        out_bytes = out_numel * (x.element_size() + 8)
    return Cost(flops=9 * x.numel(), bytes=x.numel() * x.element_size() + out_bytes)


TASK = Task(
    id="Fusion/fused_gelu_min",
    difficulty=3,
    entry="fused_gelu_min",
    signature="fused_gelu_min(input, approximate='none', dim=None, keepdim=False, out=None)",
    description=(
        "Apply GELU element-wise (approximate='none': x * 0.5 * (1 + erf(x / sqrt(2))); 'tanh': "
        "0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))), computed in float32, then take the minimum. "
        "With dim=None return the 0-dim minimum over all elements; with an int `dim` (possibly negative) return "
        "the tuple (values, indices) of each slice's minimum along dim and its int64 position along dim (the first "
        "on ties), keepdim=True keeping dim with size 1 in both. Values have the input's dtype and `out` stays None. "
        "GELU is not monotonic, so the minimum of GELU is not GELU of the minimum (the test inputs have a unique "
        "minimum in every slice)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
