import torch
import torch.nn as nn


class Model(nn.Module):
    """Adds one to its input and scales the sum, as KernelBench's own problems are written: the
    inputs made with .cuda(), a buffer with device="cuda"."""

    def __init__(self, features, scale):
        super(Model, self).__init__()
        self.register_buffer("scale", torch.full((features,), scale, device="cuda"))

    def forward(self, x):
        return (x + 1.0) * self.scale


batch_size = 4096
features = 64
scale = 0.5


def get_inputs():
    return [torch.randn(batch_size, features).cuda()]


def get_init_inputs():
    return [features, scale]
