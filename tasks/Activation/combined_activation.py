"""Matrix product followed by sigmoid, tanh, an element-wise scale and a bias."""

import math

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(input, weight1, weight2, bias, *, out=None):
    y = torch.tanh(torch.sigmoid(torch.matmul(input, weight1))) * weight2 + bias
    if out is not None:
        out.copy_(y)
        return out
    return y


# Per size, the cases seeds rotate through: input shape, D_out, weight2 shape, bias shape.
# weight2 and bias broadcast against the (*, N, D_out) product without enlarging it.
SMALL = (((64, 96), 80, (80,), (80,)),
         ((2, 40, 72), 48, (40, 48), (1, 48)))
EDGE = (((1, 17), 3, (1, 3), (3,)),
        ((3, 2, 7, 33), 130, (2, 1, 130), ()))
STANDARD = (((8, 1024, 2048), 2048, (2048,), (2048,)),)      # 68.7 GFLOP


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, small=SMALL, standard=STANDARD, edge=EDGE)
    x_shape, d_out, w2_shape, b_shape = cases[seed % len(cases)]
    d_in = x_shape[-1]
    x = randn(x_shape, gen, dtype, mode)
    w1 = randn((d_in, d_out), gen, dtype, mode, scale=1.5 / math.sqrt(d_in))
    w2 = randn(w2_shape, gen, dtype, "standard")
    b = randn(b_shape, gen, dtype, "standard", scale=0.5)
    return Inputs((x, w1, w2, b))


def cost(inputs):
    x, w1, w2, b = inputs.args
    d_in, d_out = w1.shape
    rows = x.numel() // d_in
    out_numel = rows * d_out
    return Cost(flops=2 * rows * d_in * d_out + 12 * out_numel,
                bytes=element_bytes(x, w1, w2, b) + out_numel * x.element_size())


TASK = Task(
    id="Activation/combined_activation",
    difficulty=3,
    entry="combined_activation",
    signature="combined_activation(input, weight1, weight2, bias, *, out=None)",
    description=(
        "Compute Y = tanh(sigmoid(input @ weight1)) * weight2 + bias, where `input` is (*, N, D_in) with any "
        "number of leading batch dimensions (possibly none), `weight1` is (D_in, D_out), and `weight2` and "
        "`bias` are tensors that broadcast (by the usual trailing-dimension rules) to the (*, N, D_out) product "
        "without enlarging it: for example (D_out,), (N, D_out), (1, D_out) or a 0-dim tensor. Return a new "
        "(*, N, D_out) tensor in the input's dtype (all four tensors share it); if `out` is given, write the "
        "result into it and return it (the cases here pass out=None). Accumulate the product in float32 (TF32 "
        "is acceptable for float32 inputs) and apply the element-wise steps in float32 before the final rounding."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
