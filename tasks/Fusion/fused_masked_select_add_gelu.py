"""Select the elements of a tensor under a boolean mask, add a scaled tensor or number, then GELU."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, mask, other, *, alpha=1, approximate="none", out=None):
    s = torch.add(torch.masked_select(input, mask), other, alpha=alpha)
    result = torch.nn.functional.gelu(s, approximate=approximate)
    if out is not None:
        out.resize_(result.shape).copy_(result)
        return out
    return result


# Per size, the cases seeds rotate through: input shape, mask shape (broadcast to the input's), share of
# True in the mask, other ("selected": a tensor with one value per selected element, a shape, or a Python
# number), alpha, approximate. The standard size has one configuration, so the timing seeds share it.
CASES = {
    "small": [((33, 257), (33, 257), 0.5, "selected", 1, "none"),
              ((4, 9, 130), (130,), 0.3, 0.5, -2, "tanh")],
    "edge": [((1,), (1,), 1.0, (1,), 1.5, "tanh"),
             ((3, 1, 1001), (3, 5, 1), 0.6, "selected", 0.5, "none")],   # mask enlarges the input
    "standard": [((8192, 8192), (8192, 8192), 0.5, "selected", 1, "none")],
}
# At the standard size the mask comes from this fixed seed, so both timing input sets select the same
# number of elements (and `other` has the same length); their values still differ by seed.
STANDARD_MASK_SEED = 1234567


def _broadcast(a, b):
    a, b = list(a), list(b)
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    return tuple(max(x, y) for x, y in zip(a, b))


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, mask_shape, share, other, alpha, approximate = cases[seed % len(cases)]
    x = randn(shape, gen, dtype, mode, scale=1.5)
    mask_gen = generator(STANDARD_MASK_SEED) if size == "standard" else gen
    mask = torch.rand(mask_shape, generator=mask_gen) < share
    if other == "selected":
        count = int(mask.expand(_broadcast(shape, mask_shape)).sum())
        other = randn((count,), gen, dtype, mode)
    elif isinstance(other, tuple):
        other = randn(other, gen, dtype, mode)
    return Inputs((x, mask, other), {"alpha": alpha, "approximate": approximate})


def cost(inputs):
    x, mask, other = inputs.args
    count = int(mask.expand(_broadcast(x.shape, mask.shape)).sum())
    return Cost(flops=12 * count, bytes=element_bytes(x, mask, other) + count * x.element_size())


TASK = Task(
    id="Fusion/fused_masked_select_add_gelu",
    difficulty=3,
    entry="fused_masked_select_add_gelu",
    signature="fused_masked_select_add_gelu(input, mask, other, *, alpha=1, approximate='none', out=None)",
    description=(
        "Broadcast `input` and the boolean `mask` to a common shape, gather the elements of `input` where the "
        "mask is True in row-major order into a 1-D tensor z (as torch.masked_select does), compute "
        "s = z + alpha * other, and return gelu(s) as a new 1-D tensor of length (number of True positions) in the "
        "input's dtype. `other` is a Python number or a tensor broadcastable to z's shape ((count,) or (1,)). "
        "GELU is x * 0.5 * (1 + erf(x / sqrt(2))) for approximate='none' and 0.5 * x * (1 + tanh(sqrt(2/pi) * "
        "(x + 0.044715 * x**3))) for 'tanh'. The length depends on the mask's values, so the host may read one "
        "count back from the device (e.g. .item()) to allocate the result; compute in float32 for half inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
