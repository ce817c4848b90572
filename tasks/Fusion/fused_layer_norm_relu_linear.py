"""Linear layer, then ReLU, then layer normalization over the output features (no affine params)."""

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def _normalized(normalized_shape, out_features):
    if normalized_shape is None:
        return (out_features,)
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(normalized_shape)


def reference(input, weight, bias=None, normalized_shape=None, eps=1e-5, elementwise_affine=True):
    out_features = weight.shape[0]
    shape = _normalized(normalized_shape, out_features)
    if shape != (out_features,):
        raise ValueError(f"normalized_shape must be ({out_features},), got {shape}")
    y = torch.nn.functional.relu(torch.nn.functional.linear(input, weight, bias))
    # A freshly built LayerNorm has weight ones and bias zeros, so elementwise_affine does not change
    # the values: normalize without learned parameters either way.
    return torch.nn.functional.layer_norm(y, shape, weight=None, bias=None, eps=eps)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    if seed % 2 == 0:
        lead, k, n = pick(size, small=((64,), 96, 80), standard=((8192,), 4096, 4096), edge=((37,), 33, 1001))
        with_bias, normalized_shape, eps, affine = True, None, 1e-5, True
    else:
        lead, k, n = pick(size, small=((2, 24), 64, 48), standard=((4, 1024), 4096, 8192), edge=((1, 3), 7, 3))
        with_bias, normalized_shape, eps, affine = False, n, 1e-3, False
    x = randn(lead + (k,), gen, dtype, mode)
    w = randn((n, k), gen, dtype, mode, scale=1.0 / k ** 0.5)
    b = randn((n,), gen, dtype, mode, scale=0.5) if with_bias else None
    return Inputs((x, w, b), {"normalized_shape": normalized_shape, "eps": eps, "elementwise_affine": affine})


def cost(inputs):
    x, w, b = inputs.args
    n, k = w.shape
    rows = x.numel() // k
    out_bytes = rows * n * x.element_size()
    # GEMM, bias + ReLU, and about 8 flops per element for the normalization
    return Cost(flops=2 * rows * k * n + 10 * rows * n, bytes=element_bytes(x, w, b) + out_bytes)


TASK = Task(
    id="Fusion/fused_layer_norm_relu_linear",
    difficulty=4,
    entry="fused_layer_norm_relu_linear",
    signature=("fused_layer_norm_relu_linear(input: Tensor, weight: Tensor, bias=None, normalized_shape=None, "
               "eps=1e-5, elementwise_affine=True)"),
    description=(
        "`input` has shape (*, in_features) and `weight` (out_features, in_features); `bias` is None or has "
        "shape (out_features,). Compute h = relu(input @ weight.T + bias), then layer-normalize each row of h "
        "over its last dimension: (h - mean) / sqrt(var + eps), with the biased variance. "
        "`normalized_shape` is None (meaning out_features) or out_features as an int or 1-tuple; there are no "
        "learned normalization parameters (with elementwise_affine=True the scale is all ones and the shift "
        "all zeros, so the result is the same either way). Return shape (*, out_features) in the input's dtype; "
        "accumulate in float32 (TF32 is accepted for float32 inputs)."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
