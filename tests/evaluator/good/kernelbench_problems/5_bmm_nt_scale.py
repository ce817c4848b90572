import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched product of `a` with the transpose of `b`, times a constant given to the constructor."""

    def __init__(self, scale):
        super(Model, self).__init__()
        self.scale = scale

    def forward(self, a, b):
        return torch.bmm(a, b.transpose(1, 2)) * self.scale


batch = 4
m = 50
n = 70
k = 200


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, n, k)]


def get_init_inputs():
    return [0.125]
