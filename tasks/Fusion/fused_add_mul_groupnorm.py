"""(input1 + input2) * input2, then group normalization with a per-channel affine transform."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input1, input2, weight, bias, num_groups, eps=1e-5, *, out=None):
    m = torch.mul(torch.add(input1, input2), input2)
    result = torch.nn.functional.group_norm(m, num_groups=num_groups, weight=weight, bias=bias, eps=eps)
    if out is not None:
        out.copy_(result)
        return out
    return result


# Per size, the cases seeds rotate through: input1 shape, input2 shape, num_groups, eps, affine
# parameters present. The standard size has one configuration, so the timing seeds share it.
CASES = {
    "small": [((2, 8, 24, 24), (2, 8, 24, 24), 2, 1e-5, True),     # two chunks per group
              ((2, 16, 65), (16, 1), 4, 1e-3, True)],             # per-channel input2
    "edge": [((1, 6, 1, 7), (1, 6, 1, 7), 6, 1e-5, True),          # one channel per group
             ((3, 5, 11), (5, 11), 1, 1e-5, False)],              # input2 shared by the batch, no affine
    "standard": [((32, 128, 128, 128), (32, 128, 128, 128), 32, 1e-5, True)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape1, shape2, groups, eps, affine = cases[seed % len(cases)]
    x1 = randn(shape1, gen, dtype, mode)
    x2 = randn(shape2, gen, dtype, mode)
    c = shape1[1]
    weight = randn((c,), gen, dtype, "standard", scale=0.5, shift=1.0) if affine else None
    bias = randn((c,), gen, dtype, "standard", scale=0.5) if affine else None
    return Inputs((x1, x2, weight, bias, groups), {"eps": eps})


def cost(inputs):
    x1, x2, weight, bias, _ = inputs.args
    return Cost(flops=10 * x1.numel(), bytes=2 * element_bytes(x1) + element_bytes(x2, weight, bias))


TASK = Task(
    id="Fusion/fused_add_mul_groupnorm",
    difficulty=2,
    entry="fused_add_mul_groupnorm",
    signature="fused_add_mul_groupnorm(input1, input2, weight, bias, num_groups, eps=1e-5, *, out=None)",
    description=(
        "`input1` has shape (N, C, *) and `input2` a shape that broadcasts to it (the same shape, per-channel "
        "(C, 1), or without the batch dimension). Form m = (input1 + input2) * input2, then group-normalize m: "
        "split the C channels into `num_groups` consecutive groups, and for every sample and group subtract the "
        "mean and divide by sqrt(var + eps) over all the group's elements (channels and positions, biased "
        "variance); finally multiply channel c by weight[c] and add bias[c] (`weight` and `bias` have shape (C,), "
        "or are None for no scale or shift). Return a new tensor of input1's shape and dtype; compute in float32."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
)
