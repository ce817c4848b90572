"""One SGD step (momentum, dampening, Nesterov, weight decay) on one parameter and its momentum buffer, in place."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(param, grad, momentum_buffer=None, lr=0.1, momentum=0.9, weight_decay=0.0, dampening=0.0,
              nesterov=False):
    if weight_decay != 0:
        grad = grad + weight_decay * param
    if momentum > 0:
        if momentum_buffer is None:
            momentum_buffer = torch.zeros_like(grad)
        momentum_buffer.mul_(momentum).add_(grad, alpha=1 - dampening)
        grad = grad + momentum * momentum_buffer if nesterov else momentum_buffer
    param.add_(grad, alpha=-lr)
    return (param, momentum_buffer) if momentum > 0 else param


# (lr, momentum, weight_decay, dampening, nesterov, with_buffer): small seeds take the first two,
# edge seeds the last two, and outlier mode repeats them. The defaults with a buffer carried over
# from earlier steps; a first step (no buffer: a zero one is made and returned) with dampening and
# weight decay; Nesterov momentum with weight decay; and plain SGD (momentum 0: param alone is
# returned), given a buffer that must stay untouched, except in outlier mode, which passes None.
SETTINGS = (
    (0.1, 0.9, 0.0, 0.0, False, True),
    (1e-2, 0.9, 0.01, 0.1, False, False),
    (0.05, 0.8, 1e-3, 0.0, True, True),
    (3e-2, 0.0, 0.05, 0.0, False, True),
)
STANDARD_SETTING = (1e-2, 0.9, 1e-4, 0.0, True, True)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    case = seed % 2 + 2 * (mode == "outlier")  # picks the edge shapes
    setting = seed % 2 + 2 * (size == "edge")  # every setting runs in standard mode too
    shape = pick(size, small=(48, 130), standard=(4096, 4096), edge=((1,), (3, 1001), (5, 1, 17), (999,))[case])
    lr, momentum, weight_decay, dampening, nesterov, with_buffer = (
        STANDARD_SETTING if size == "standard" else SETTINGS[setting])
    with_buffer = with_buffer and not (momentum == 0 and mode == "outlier")
    param = randn(shape, gen, dtype, mode)
    grad = randn(shape, gen, dtype, mode, scale=0.5)
    momentum_buffer = randn(shape, gen, dtype, mode, scale=0.3) if with_buffer else None
    kwargs = {"lr": lr, "momentum": momentum, "weight_decay": weight_decay, "dampening": dampening,
              "nesterov": nesterov}
    return Inputs((param, grad, momentum_buffer), kwargs)


def cost(inputs):
    param, grad, momentum_buffer = inputs.args
    weight_decay = inputs.kwargs.get("weight_decay", 0.0)
    momentum = inputs.kwargs.get("momentum", 0.9)
    nesterov = inputs.kwargs.get("nesterov", False)
    # param -= lr*g; g += weight_decay*param; buf = momentum*buf + (1-dampening)*g; g += momentum*buf
    per_element = 2 + 2 * (weight_decay != 0) + (3 + 2 * nesterov if momentum > 0 else 0)
    # reads param and grad, writes param; with momentum, writes the buffer (and reads it if one was given)
    arrays = 3 + ((1 + (momentum_buffer is not None)) if momentum > 0 else 0)
    return Cost(flops=per_element * param.numel(), bytes=arrays * element_bytes(param))


TASK = Task(
    id="Optimizer/SGD",
    difficulty=3,
    entry="sgd_step",
    signature=("sgd_step(param, grad, momentum_buffer=None, lr=0.1, momentum=0.9, weight_decay=0.0, "
               "dampening=0.0, nesterov=False)"),
    kernelbenchx_signature=("SGD(params, lr=1e-3, momentum=0, weight_decay=0, dampening=0, nesterov=False, "
                            "maximize=False, foreach=None, differentiable=False, fused=None)"),
    description=(
        "Apply one SGD step to a single parameter tensor. `param`, `grad` and `momentum_buffer` (a tensor or "
        "None) share one shape and dtype; `grad` stays unchanged. Per element: g = grad + weight_decay*param "
        "(just grad when weight_decay is 0). When momentum > 0: a None buffer is replaced by a new zero tensor "
        "like grad; buf = momentum*buf + (1-dampening)*g, written into the buffer in place; g = g + momentum*buf "
        "with nesterov, else g = buf. Then param -= lr*g in place. Return (param, buf), the same tensor objects "
        "(buf being the new one when None was passed), when momentum > 0; otherwise return param alone and "
        "leave any buffer untouched. Scalars are Python numbers; compute in float32 for half-precision tensors "
        "and store back in their dtype."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    mutates=(0, 2),
)
