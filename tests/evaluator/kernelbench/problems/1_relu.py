import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies ReLU to its input."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x):
        return torch.relu(x)


batch_size = 37
dim = 301


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
