"""Batch normalization over the channel dimension, with running statistics updated in training mode."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, uniform, with_outliers


def reference(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
              eps=1e-05):
    return torch.nn.functional.batch_norm(input, running_mean, running_var, weight, bias,
                                          training=training, momentum=momentum, eps=eps)


# Per case: (training, has weight, has bias, momentum, eps). Index = seed + 2 * (mode == "outlier").
SETTINGS = (
    (True, True, True, 0.1, 1e-5),
    (False, True, True, 0.1, 1e-3),
    (True, False, False, 0.25, 1e-5),
    (True, True, False, 0.05, 1e-4),
)

SHAPES = {
    "small": ((16, 12, 40), (64, 48), (4, 8, 9, 11), (40, 24)),
    "edge": ((2, 1), (1, 5, 7), (3, 7, 1, 1), (13, 3, 1001)),
    "standard": ((64, 256, 56, 56), (32, 256, 6144), (65536, 768), (128, 64, 80, 80)),
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    case = seed % 2 + 2 * (mode == "outlier")
    shape = pick(size, **{k: v[case] for k, v in SHAPES.items()})
    training, has_weight, has_bias, momentum, eps = SETTINGS[case]
    channels = shape[1]
    # Each channel gets its own offset and spread, so per-channel statistics matter.
    stat_shape = (1, channels) + (1,) * (len(shape) - 2)
    shift = torch.randn(stat_shape, generator=gen) * 2.0
    spread = torch.rand(stat_shape, generator=gen) * 1.5 + 0.5
    x = torch.randn(shape, generator=gen) * spread + shift
    if mode == "outlier":
        x = with_outliers(x, gen)
    # Running statistics, weight and bias are float32 for every input dtype (the mixed-precision form
    # that torch.nn.functional.batch_norm accepts for half inputs on the CPU and GPU).
    running_mean = torch.randn(channels, generator=gen) * 0.5
    running_var = uniform((channels,), gen, torch.float32, 0.5, 2.0)
    weight = uniform((channels,), gen, torch.float32, 0.5, 1.5) if has_weight else None
    bias = torch.randn(channels, generator=gen) * 0.5 if has_bias else None
    kwargs = {"training": training, "momentum": momentum, "eps": eps}
    return Inputs((x.to(dtype), running_mean, running_var, weight, bias), kwargs)


def cost(inputs):
    x, running_mean, running_var, weight, bias = inputs.args
    training = inputs.kwargs.get("training", False)
    params = element_bytes(running_mean, running_var, weight, bias)
    if training:
        # statistics (sum, squares) plus normalize, and the running-statistics write-back
        flops = 7 * x.numel()
        params += element_bytes(running_mean, running_var)
    else:
        flops = 2 * x.numel()
    return Cost(flops=flops, bytes=2 * element_bytes(x) + params)


TASK = Task(
    id="Normalization/batch_norm",
    difficulty=4,
    entry="batch_norm",
    signature=("batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, "
               "momentum=0.1, eps=1e-05)"),
    description=(
        "Batch-normalize `input` of shape (N, C), (N, C, L) or (N, C, H, W) per channel (dimension 1) and return "
        "a new tensor of the input's shape and dtype: y = (x - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c], "
        "where a missing weight means 1 and a missing bias means 0. With training=False, mean and var are "
        "`running_mean` and `running_var`. With training=True they are the statistics of the batch over every "
        "dimension except 1 (biased variance), and `running_mean` and `running_var` are updated in place: "
        "running = (1 - momentum) * running + momentum * batch_stat, using the unbiased (count - 1) variance for "
        "running_var. `running_mean`, `running_var`, `weight` and `bias` are float32 vectors of length C for every "
        "input dtype; compute in float32 for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    mutates=(1, 2),
)
