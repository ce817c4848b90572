"""One SGD step (momentum, dampening, Nesterov, weight decay, maximize) over a list of parameters, updating the
parameters and momentum buffers in place."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(params, grads, momentum_buffers, step, lr=1e-3, momentum=0, weight_decay=0, dampening=0,
              nesterov=False, maximize=False):
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        if weight_decay != 0:
            grad = grad + weight_decay * param
        if momentum != 0:
            buf = momentum_buffers[i]
            if step == 1:
                buf.copy_(grad)
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad + momentum * buf if nesterov else buf
        param.add_(grad, alpha=-lr)
    return None


# (step, lr, momentum, weight_decay, dampening, nesterov, maximize): small seeds take the first
# two, edge seeds the last two, and outlier mode repeats them. The first step (buffer set to the
# gradient), dampened momentum with weight decay while maximizing, Nesterov, and plain SGD
# (momentum 0: the buffers are left alone).
SETTINGS = (
    (1, 1e-2, 0.9, 0.0, 0.0, False, False),
    (5, 1e-3, 0.9, 0.01, 0.1, False, True),
    (12, 0.1, 0.8, 0.0, 0.0, True, False),
    (3, 0.05, 0.0, 0.05, 0.0, False, True),
)
STANDARD_SETTING = (10, 1e-2, 0.9, 1e-4, 0.0, True, False)

# the shapes of the parameter list per (size, case)
SHAPES = {
    "small": [[(48, 130), (130,), (7, 3, 5)], [(64, 64), (33,)]],
    "edge": [[(1,), (3, 1001)], [(999,), (5, 1, 17), (1, 1)], [(1, 7)], [(2, 3, 4), (1001,)]],
    "standard": [[(4096, 4096), (4096, 1024), (1024,), (1000, 257)]],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    case = seed % 2 + 2 * (mode == "outlier")  # picks the edge shapes
    setting = seed % 2 + 2 * (size == "edge")  # every setting runs in standard mode too
    shapes = pick(size, **SHAPES)
    shapes = shapes[case % len(shapes)]
    step, lr, momentum, weight_decay, dampening, nesterov, maximize = (
        STANDARD_SETTING if size == "standard" else SETTINGS[setting])
    params = [randn(s, gen, dtype, mode) for s in shapes]
    grads = [randn(s, gen, dtype, mode, scale=0.5) for s in shapes]
    buffers = [randn(s, gen, dtype, mode, scale=0.3) for s in shapes]
    kwargs = {"lr": lr, "momentum": momentum, "weight_decay": weight_decay, "dampening": dampening,
              "nesterov": nesterov, "maximize": maximize}
    return Inputs((params, grads, buffers, step), kwargs)


def cost(inputs):
    params, grads, buffers, step = inputs.args
    momentum = inputs.kwargs.get("momentum", 0)
    # reads param and grad (and the buffer after the first step), writes param (and the buffer)
    arrays = 2 + (0 if momentum == 0 else 2 if step > 1 else 1) + 1
    return Cost(flops=sum(8 * p.numel() for p in params), bytes=arrays * element_bytes(*params))


TASK = Task(
    id="Optimizer/SGD",
    difficulty=3,
    entry="SGD",
    signature=("SGD(params, grads, momentum_buffers, step, lr=1e-3, momentum=0, weight_decay=0, dampening=0, "
               "nesterov=False, maximize=False)"),
    kernelbenchx_signature=("SGD(params, lr=1e-3, momentum=0, weight_decay=0, dampening=0, nesterov=False, "
                            "maximize=False, foreach=None, differentiable=False, fused=None)"),
    description=(
        "One step of torch.optim.SGD as a function: params, grads and momentum_buffers are equal-length lists of "
        "tensors, same shape and dtype at each index; update params and momentum_buffers in place and return None. "
        "Per element: g = -grad if maximize else grad; g += weight_decay*param; if momentum != 0: buf = g on the "
        "first step (step == 1, the buffer's old contents ignored), else buf = momentum*buf + (1-dampening)*g, "
        "then g = g + momentum*buf if nesterov else buf (with momentum 0 the buffers stay untouched); finally "
        "param -= lr*g. Scalars are Python numbers; compute in float32 for half-precision tensors and store in "
        "their dtype."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    mutates=(0, 2),
)
