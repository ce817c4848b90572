"""One AdamW optimizer step (decoupled weight decay), updating the parameter and both moments in place."""

import math

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(param, grad, exp_avg, exp_avg_sq, step, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
              weight_decay=0.01):
    param.mul_(1 - lr * weight_decay)
    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(eps)
    param.addcdiv_(exp_avg, denom, value=-lr / bias_correction1)
    return param, exp_avg, exp_avg_sq


# (step, lr, beta1, beta2, eps, weight_decay) per case: early steps (strong bias correction) and
# late ones, the default betas and smaller ones, weak and strong weight decay.
SETTINGS = (
    (1, 1e-3, 0.9, 0.999, 1e-8, 0.01),
    (7, 1e-2, 0.8, 0.99, 1e-6, 0.1),
    (1000, 1e-2, 0.9, 0.999, 1e-8, 0.1),
    (150, 3e-3, 0.85, 0.995, 1e-7, 0.05),
)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    shape = pick(size, small=(48, 130), standard=(4096, 4096),
                 edge=((1,), (3, 1001), (5, 1, 17), (999,))[seed % 2 + 2 * (mode == "outlier")])
    step, lr, beta1, beta2, eps, weight_decay = SETTINGS[seed % 2 + 2 * (mode == "outlier")]
    param = randn(shape, gen, dtype, mode)
    grad = randn(shape, gen, dtype, mode, scale=0.5)
    exp_avg = randn(shape, gen, dtype, mode, scale=0.2)
    # The second moment must be non-negative: square normal samples in float32, then cast.
    exp_avg_sq = randn(shape, gen, torch.float32, mode, scale=0.3).square().to(dtype)
    kwargs = {"lr": lr, "beta1": beta1, "beta2": beta2, "eps": eps, "weight_decay": weight_decay}
    return Inputs((param, grad, exp_avg, exp_avg_sq, step), kwargs)


def cost(inputs):
    param = inputs.args[0]
    # reads param, grad, exp_avg, exp_avg_sq; writes param, exp_avg, exp_avg_sq
    return Cost(flops=14 * param.numel(), bytes=7 * element_bytes(param))


TASK = Task(
    id="Optimizer/AdamW",
    difficulty=4,
    entry="adamw_step",
    signature=("adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr=1e-3, beta1=0.9, beta2=0.999, "
               "eps=1e-8, weight_decay=0.01)"),
    description=(
        "Perform one AdamW step on four tensors of the same shape and dtype, updating `param`, `exp_avg` and "
        "`exp_avg_sq` in place and returning those same three tensor objects as a tuple (`grad` is read only). "
        "Per element: param *= 1 - lr*weight_decay; exp_avg = beta1*exp_avg + (1-beta1)*grad; "
        "exp_avg_sq = beta2*exp_avg_sq + (1-beta2)*grad**2; then param -= (lr / (1 - beta1**step)) * exp_avg / "
        "(sqrt(exp_avg_sq) / sqrt(1 - beta2**step) + eps), using the updated moments. `step` is a Python int >= 1 "
        "(the 1-based step count) and the hyperparameters are Python floats; compute in float32 for "
        "half-precision tensors and store back in their dtype."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    mutates=(0, 2, 3),
)
