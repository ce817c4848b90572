"""One RMSProp optimizer step, updating the parameter and the running mean of squared gradients in place."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(param, grad, square_avg, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0):
    if weight_decay != 0:
        grad = grad + weight_decay * param
    square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
    param.addcdiv_(grad, square_avg.sqrt().add_(eps), value=-lr)
    return param, square_avg


# (lr, alpha, eps, weight_decay): small seeds take the first two, edge seeds the last two, and
# outlier mode repeats them. The defaults, a faster average with weight decay, a large eps, and
# strong weight decay.
SETTINGS = (
    (1e-2, 0.99, 1e-8, 0.0),
    (3e-3, 0.9, 1e-6, 0.01),
    (1e-2, 0.95, 1e-2, 0.0),
    (1e-3, 0.999, 1e-8, 0.2),
)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    case = seed % 2 + 2 * (mode == "outlier")  # picks the edge shapes
    setting = seed % 2 + 2 * (size == "edge")  # every setting runs in standard mode too
    shape = pick(size, small=(48, 130), standard=(4096, 4096), edge=((1,), (3, 1001), (5, 1, 17), (999,))[case])
    lr, alpha, eps, weight_decay = SETTINGS[1 if size == "standard" else setting]
    param = randn(shape, gen, dtype, mode)
    grad = randn(shape, gen, dtype, mode, scale=0.5)
    # the running mean of squares is non-negative: square normal samples in float32, then cast
    square_avg = randn(shape, gen, torch.float32, mode, scale=0.3).square().to(dtype)
    kwargs = {"lr": lr, "alpha": alpha, "eps": eps, "weight_decay": weight_decay}
    return Inputs((param, grad, square_avg), kwargs)


def cost(inputs):
    param = inputs.args[0]
    # reads param, grad, square_avg; writes param and square_avg
    return Cost(flops=10 * param.numel(), bytes=5 * element_bytes(param))


TASK = Task(
    id="Optimizer/RMSProp",
    difficulty=3,
    entry="rmsprop_step",
    signature="rmsprop_step(param, grad, square_avg, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0)",
    description=(
        "Apply one RMSProp step to three tensors of the same shape and dtype, writing the results into `param` "
        "and `square_avg` in place and returning those same two tensor objects as a tuple. `grad` itself stays "
        "unchanged. Per element: g = grad + weight_decay*param (the old param; just grad when weight_decay is 0); "
        "square_avg = alpha*square_avg + (1-alpha)*g*g; then param -= lr*g / (sqrt(square_avg) + eps), using the "
        "updated square_avg. The hyperparameters are Python floats; compute in float32 for half-precision tensors "
        "and store back in their dtype."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    mutates=(0, 2),
)
