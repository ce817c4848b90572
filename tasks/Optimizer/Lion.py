"""One Lion optimizer step (sign of an interpolated momentum), updating the parameter and momentum in place."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(param, grad, exp_avg, lr=1e-4, beta1=0.9, beta2=0.99, weight_decay=0.0):
    update = exp_avg * beta1 + grad * (1 - beta1)
    if weight_decay != 0:
        param.mul_(1 - lr * weight_decay)
    param.add_(torch.sign(update), alpha=-lr)
    exp_avg.mul_(beta2).add_(grad, alpha=1 - beta2)
    return param, exp_avg


# (lr, beta1, beta2, weight_decay): small seeds take the first two, edge seeds the last two, and
# outlier mode repeats them. The defaults, other betas with weight decay, and large learning rates
# so the sign term dominates.
SETTINGS = (
    (1e-4, 0.9, 0.99, 0.0),
    (3e-4, 0.95, 0.98, 0.1),
    (1e-2, 0.9, 0.99, 0.01),
    (2e-3, 0.8, 0.999, 0.5),
)


def _clear_of_zero(grad, exp_avg, beta1):
    """grad moved, where needed, so that u = beta1*exp_avg + (1-beta1)*grad is clearly nonzero: a u within
    rounding of zero would make sign(u) depend on the precision it is computed in."""
    m = exp_avg.double()
    while True:
        g = grad.double()
        t1, t2 = beta1 * m, (1 - beta1) * g
        near = (t1 + t2).abs() < 0.02 * (t1.abs() + t2.abs())
        if not bool(near.any()):
            return grad
        push = torch.where(m >= 0, 0.25, -0.25).to(torch.float32)
        grad = torch.where(near, (grad.float() + push).to(grad.dtype), grad)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    case = seed % 2 + 2 * (mode == "outlier")  # picks the edge shapes
    setting = seed % 2 + 2 * (size == "edge")  # every setting runs in standard mode too
    shape = pick(size, small=(48, 130), standard=(4096, 4096), edge=((1,), (3, 1001), (5, 1, 17), (999,))[case])
    lr, beta1, beta2, weight_decay = SETTINGS[0 if size == "standard" else setting]
    param = randn(shape, gen, dtype, mode)
    grad = randn(shape, gen, dtype, mode, scale=0.5)
    exp_avg = randn(shape, gen, dtype, mode, scale=0.2)
    grad = _clear_of_zero(grad, exp_avg, beta1)
    if size != "standard":
        # a few exact zeros: sign(0) = 0 leaves those parameters to the decay alone
        exp_avg.view(-1)[::7] = 0
        grad.view(-1)[::7] = 0
    kwargs = {"lr": lr, "beta1": beta1, "beta2": beta2, "weight_decay": weight_decay}
    return Inputs((param, grad, exp_avg), kwargs)


def cost(inputs):
    param = inputs.args[0]
    # reads param, grad, exp_avg; writes param and exp_avg
    return Cost(flops=10 * param.numel(), bytes=5 * element_bytes(param))


TASK = Task(
    id="Optimizer/Lion",
    difficulty=3,
    entry="lion_step",
    signature="lion_step(param, grad, exp_avg, lr=1e-4, beta1=0.9, beta2=0.99, weight_decay=0.0)",
    description=(
        "Apply one Lion step to three tensors of the same shape and dtype, writing the results into `param` and "
        "`exp_avg` in place and returning those same two tensor objects as a tuple (`grad` is read only). "
        "Per element, with m the momentum before this call: u = beta1*m + (1-beta1)*grad; param is first scaled "
        "by 1 - lr*weight_decay (when weight_decay is nonzero), then param -= lr*sign(u), where sign gives -1, 0 "
        "or +1 (sign(0) = 0); finally exp_avg = beta2*m + (1-beta2)*grad. The hyperparameters are Python floats; "
        "compute in float32 for half-precision tensors and store back in their dtype."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    mutates=(0, 2),
)
