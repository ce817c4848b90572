"""GELU of a tensor followed by its minimum (overall, or along a dimension with indices)."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn

GELU_ARGMIN = -0.7518  # where x * Phi(x) is smallest (the tanh form's minimum is within 1e-3)
JITTER = 0.3           # each slice's planted minimizer lies within this distance of it
BAND = 0.45            # every other input keeps at least this distance from it


def reference(input, dim=None, keepdim=False, approximate="none", out=None):
    g = torch.nn.functional.gelu(input, approximate=approximate)
    if dim is None:
        return torch.min(g)
    values, indices = torch.min(g, dim, keepdim=keepdim)
    return values, indices


# (shape, dim, keepdim, approximate) per (size, seed): the whole tensor, a middle dim, a short last
# dim and a leading dim, both GELU forms. The standard size has one configuration, so the seeds
# that rotate during timing share it.
CASES = {
    "small": [((64, 100), None, False, "none"), ((12, 40, 10), 1, True, "tanh")],
    "edge": [((1001, 3), -1, False, "tanh"), ((5, 1, 17, 3), 0, False, "none")],
    "standard": [((16384, 4096), -1, False, "none")],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, dim, keepdim, approximate = cases[seed % len(cases)]
    x = randn(shape, gen, torch.float32, mode)
    # GELU is flat around its minimum, so nearly equal inputs there would make the argmin depend on
    # rounding. Push every value out of a band around the minimizer, then plant one value near the
    # minimizer in each slice along the reduced dim (the last dim for dim=None): each slice's
    # minimum is unique and separated from the rest by several bfloat16 units in the last place
    # (GELU at distance JITTER is below GELU at distance BAND), and the minima differ between slices.
    d = x - GELU_ARGMIN
    near = d.abs() < BAND
    x = torch.where(near, GELU_ARGMIN + torch.where(d < 0, -1.0, 1.0) * (BAND + d.abs()), x)
    axis = -1 if dim is None else dim
    slots = list(shape)
    slots[axis] = 1
    where = torch.randint(0, shape[axis], slots, generator=gen)
    planted = GELU_ARGMIN + (torch.rand(slots, generator=gen) * 2.0 - 1.0) * JITTER
    x.scatter_(axis, where, planted)
    return Inputs((x.to(dtype),), {"dim": dim, "keepdim": keepdim, "approximate": approximate})


def cost(inputs):
    (x,) = inputs.args
    dim = inputs.kwargs.get("dim")
    out_numel = 1 if dim is None else x.numel() // x.shape[dim]
    out_bytes = out_numel * (x.element_size() + (0 if dim is None else 8))
    return Cost(flops=10 * x.numel(), bytes=element_bytes(x) + out_bytes)


TASK = Task(
    id="Reduce/min_gelu",
    difficulty=2,
    entry="min_gelu",
    signature="min_gelu(input, dim=None, keepdim=False, approximate='none', out=None)",
    description=(
        "Apply GELU elementwise (approximate='none': x * 0.5 * (1 + erf(x / sqrt(2))); 'tanh': "
        "0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))), rounded to the input's dtype, then take the "
        "minimum. With dim=None return the minimum over all elements as a 0-dim tensor (keepdim is ignored); "
        "with an int `dim` (negative counts from the end) return a tuple (values, indices): the minima along "
        "`dim` in the input's dtype and their int64 positions (first occurrence on ties), the reduced dim kept "
        "with size 1 when keepdim=True. Compute in float32 for half inputs; `out` is always None."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
