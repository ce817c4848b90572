"""One Adam optimizer step (optionally AMSGrad, maximizing, with L2 weight decay) over a list of parameters,
updating the parameters and optimizer state in place."""

import math

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(params, grads, exp_avgs, exp_avg_sqs, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
              weight_decay=0, amsgrad=False, max_exp_avg_sqs=None, maximize=False):
    beta1, beta2 = betas
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        if weight_decay != 0:
            grad = grad + weight_decay * param
        exp_avgs[i].mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg_sqs[i].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        if amsgrad:
            torch.maximum(max_exp_avg_sqs[i], exp_avg_sqs[i], out=max_exp_avg_sqs[i])
            second = max_exp_avg_sqs[i]
        else:
            second = exp_avg_sqs[i]
        denom = (second.sqrt() / math.sqrt(bias_correction2)).add_(eps)
        param.addcdiv_(exp_avgs[i], denom, value=-lr / bias_correction1)
    return None


# (step, lr, betas, eps, weight_decay, amsgrad, maximize): small seeds take the first two, edge
# seeds the last two, and outlier mode repeats them. Early and late steps, plain Adam, AMSGrad,
# maximizing, with and without weight decay.
SETTINGS = (
    (1, 1e-3, (0.9, 0.999), 1e-8, 0.0, False, False),
    (7, 1e-2, (0.8, 0.99), 1e-6, 0.1, True, True),
    (1000, 1e-2, (0.9, 0.999), 1e-8, 0.05, True, False),
    (150, 3e-3, (0.85, 0.995), 1e-7, 0.0, False, True),
)
STANDARD_SETTING = (10, 1e-3, (0.9, 0.999), 1e-8, 0.01, True, False)

# the shapes of the parameter list per (size, case)
SHAPES = {
    "small": [[(48, 130), (130,), (7, 3, 5)], [(64, 64), (33,)]],
    "edge": [[(1,), (3, 1001)], [(999,), (5, 1, 17), (1, 1)], [(1, 7)], [(2, 3, 4), (1001,)]],
    "standard": [[(2048, 4096), (4096, 1024), (1024,), (1000, 257)]],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    case = seed % 2 + 2 * (mode == "outlier")  # picks the edge shapes
    setting = seed % 2 + 2 * (size == "edge")  # every setting runs in standard mode too
    shapes = pick(size, **SHAPES)
    shapes = shapes[case % len(shapes)]
    step, lr, betas, eps, weight_decay, amsgrad, maximize = STANDARD_SETTING if size == "standard" else SETTINGS[setting]
    params = [randn(s, gen, dtype, mode) for s in shapes]
    grads = [randn(s, gen, dtype, mode, scale=0.5) for s in shapes]
    exp_avgs = [randn(s, gen, dtype, mode, scale=0.2) for s in shapes]
    # second moments are non-negative: square normal samples in float32, then cast
    squares = [randn(s, gen, torch.float32, mode, scale=0.3).square() for s in shapes]
    exp_avg_sqs = [v.to(dtype) for v in squares]
    # the running maxima sit above or below the new second moments, element by element
    max_sqs = [(v * uniform(v.shape, gen, torch.float32, 0.5, 1.5)).to(dtype) for v in squares] if amsgrad else None
    return Inputs((params, grads, exp_avgs, exp_avg_sqs, step, lr, betas, eps, weight_decay, amsgrad, max_sqs,
                   maximize))


def cost(inputs):
    params = inputs.args[0]
    amsgrad = inputs.args[9]
    # reads param, grad, exp_avg, exp_avg_sq (and the running max); writes all but grad
    arrays = 9 if amsgrad else 7
    return Cost(flops=sum(16 * p.numel() for p in params), bytes=arrays * element_bytes(*params))


TASK = Task(
    id="Optimizer/Adam",
    difficulty=3,
    entry="Adam",
    signature=("Adam(params, grads, exp_avgs, exp_avg_sqs, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, "
               "weight_decay=0, amsgrad=False, max_exp_avg_sqs=None, maximize=False)"),
    kernelbenchx_signature=("Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, "
                            "foreach=None, maximize=False, capturable=False, differentiable=False, fused=None)"),
    kernelbenchx_difference=(
        "KernelBench-X's `Adam` returns a torch.optim.Adam and its tests compare only the optimizer's settings, so "
        "no kernel runs; here `Adam` performs one step on lists of parameters, gradients and moment buffers, "
        "like the other optimizer tasks. A KernelBench-X candidate has no step to call: it must be rewritten."),
    description=(
        "One step of torch.optim.Adam as a function: params, grads, exp_avgs, exp_avg_sqs (and max_exp_avg_sqs "
        "when amsgrad is True, else None) are equal-length lists of tensors, same shape and dtype at each index; "
        "update params, exp_avgs, exp_avg_sqs and max_exp_avg_sqs in place and return None. Per element, with "
        "(beta1, beta2) = betas and `step` the 1-based step count: g = -grad if maximize else grad; g += "
        "weight_decay*param; m = beta1*m + (1-beta1)*g; v = beta2*v + (1-beta2)*g*g; with amsgrad vmax = "
        "max(vmax, v) and s = vmax, else s = v; param -= lr/(1-beta1**step) * m / (sqrt(s)/sqrt(1-beta2**step) + "
        "eps). Scalars are Python numbers; compute in float32 for half-precision tensors and store in their dtype."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    mutates=(0, 2, 3, 10),
)
