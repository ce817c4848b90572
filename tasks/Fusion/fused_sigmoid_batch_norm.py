"""Batch normalization (updating running statistics in training mode), then the logistic sigmoid."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, uniform, with_outliers


def reference(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    normalized = torch.nn.functional.batch_norm(input, running_mean, running_var, weight, bias, training=training,
                                                momentum=momentum, eps=eps)
    return torch.sigmoid(normalized)


# Per (size, seed): (shape, training, has weight, has bias, momentum, eps). The standard size has one
# configuration.
CASES = {
    "small": [((16, 12, 40), True, True, True, 0.1, 1e-5), ((64, 48), False, True, True, 0.1, 1e-3)],
    "edge": [((3, 7, 1, 1), True, False, False, 0.25, 1e-5), ((1, 5, 7), False, True, False, 0.05, 1e-4)],
    "standard": [((64, 256, 56, 56), True, True, True, 0.1, 1e-5)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    shape, training, has_weight, has_bias, momentum, eps = cases[seed % len(cases)]
    channels = shape[1]
    # Each channel gets its own offset and spread, so per-channel statistics matter.
    stat_shape = (1, channels) + (1,) * (len(shape) - 2)
    shift = torch.randn(stat_shape, generator=gen) * 2.0
    spread = torch.rand(stat_shape, generator=gen) * 1.5 + 0.5
    x = torch.randn(shape, generator=gen) * spread + shift
    if mode == "outlier":
        x = with_outliers(x, gen)
    # Running statistics, weight and bias are float32 for every input dtype (the mixed-precision form
    # torch.nn.functional.batch_norm accepts); in eval mode they only roughly match the data.
    running_mean = torch.randn(channels, generator=gen) * 2.0
    running_var = uniform((channels,), gen, torch.float32, 0.5, 3.0)
    weight = uniform((channels,), gen, torch.float32, 0.5, 2.0) if has_weight else None
    bias = torch.randn(channels, generator=gen) * 0.5 if has_bias else None
    kwargs = {"training": training, "momentum": momentum, "eps": eps}
    return Inputs((x.to(dtype), running_mean, running_var, weight, bias), kwargs)


def cost(inputs):
    x, running_mean, running_var, weight, bias = inputs.args
    params = element_bytes(running_mean, running_var, weight, bias)
    if inputs.kwargs.get("training", False):
        # batch statistics, normalize + sigmoid, and the running-statistics write-back
        written = element_bytes(running_mean, running_var)
        return Cost(flops=11 * x.numel(), bytes=2 * element_bytes(x) + params + written)
    return Cost(flops=6 * x.numel(), bytes=2 * element_bytes(x) + params)


TASK = Task(
    id="Fusion/fused_sigmoid_batch_norm",
    difficulty=2,
    entry="fused_sigmoid_batch_norm",
    signature=("fused_sigmoid_batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, "
               "momentum=0.1, eps=1e-5)"),
    description=(
        "Normalize `input` of shape (N, C), (N, C, L) or (N, C, H, W) per channel c (dim 1) as "
        "z = (x - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c] (weight 1 and bias 0 when None) and "
        "return sigmoid(z) = 1 / (1 + exp(-z)) as a new tensor of the input's shape and dtype. With "
        "training=False mean and var come from `running_mean` and `running_var`, which stay unchanged. With "
        "training=True they are the batch statistics over every dim except 1 (biased variance), and both "
        "running buffers are updated in place to (1 - momentum) * running + momentum * stat, the variance "
        "term using the unbiased (count - 1) estimate. Buffers, weight and bias are float32 vectors of "
        "length C for every input dtype; compute in float32."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    mutates=(1, 2),
)
