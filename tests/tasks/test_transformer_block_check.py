"""Fusion/fused_transformer_block's statistical check against outputs made here: float32 products on
TF32 tensor cores (operands truncated to TF32, as Hopper's are) pass even in rows where one softmax
probability dominates, and outputs that are wrong in the dropout or in the block still fail, as do
products on bfloat16 operands: a kernel cannot buy speed with the room its bound leaves for TF32."""

import importlib

import pytest
import torch

from evaluator.task import Inputs

block = importlib.import_module("tasks.Fusion.fused_transformer_block")
P, EPS = 0.1, 1e-5


def truncated_to_tf32(t):
    return (t.view(torch.int32) & -(1 << 13)).view(torch.float32)


def rounded_to_tf32(t):
    bits = t.view(torch.int32)
    return ((bits + (1 << 12)) & -(1 << 13)).view(torch.float32)


def rounded_to_bfloat16(t):
    return t.to(torch.bfloat16).to(torch.float32)


def product(a, b, operands):
    return (operands(a).double() @ operands(b).double()).float()


def block_output(inputs, gen, operands=truncated_to_tf32, scale=1 / (1 - P), drop=P, mask=None):
    x, w1, w2, residual = inputs.args
    probs = torch.softmax(product(x, w1, operands), -1)
    keep = torch.rand(probs.shape, generator=gen) >= drop if mask is None else mask
    pre = product(torch.where(keep, probs * scale, 0.0), w2, operands) + residual
    return torch.nn.functional.layer_norm(pre, (pre.shape[-1],), eps=EPS)


@pytest.fixture(scope="module")
def dominated():
    """512 rows of the standard configuration, its first product scaled up until rows with one
    dominant probability are common (the largest above 0.9)."""
    x, w1, w2, residual = block.make_inputs(1, "standard", "standard", torch.float32).args
    inputs = Inputs((x[0, :512].contiguous(), (1.5 * w1).contiguous(), w2, residual[0, :512].contiguous()),
                    {"dropout_p": P, "eps": EPS})
    assert torch.softmax(inputs.args[0] @ inputs.args[1], -1).max() > 0.9
    return inputs


@pytest.mark.parametrize("operands", [truncated_to_tf32, rounded_to_tf32, lambda t: t],
                         ids=["tf32-truncated", "tf32-rounded", "float32"])
def test_correct_blocks_pass(dominated, operands):
    gen = torch.Generator().manual_seed(0)
    runs = [block_output(dominated, gen, operands) for _ in range(3)]
    assert block.check(dominated, runs) == []


def test_a_block_off_by_a_percent_in_one_row_fails(dominated):
    gen = torch.Generator().manual_seed(0)
    runs = [block_output(dominated, gen) for _ in range(3)]
    runs[1][7] *= 1.01
    (failure,) = block.check(dominated, runs)
    assert failure.startswith("call 2:") and "differ from the block recomputed" in failure


def test_dropout_unscaled_or_at_another_rate_or_repeated_fails(dominated):
    gen = torch.Generator().manual_seed(0)
    unscaled = [block_output(dominated, gen, scale=1.0) for _ in range(3)]
    assert block.check(dominated, unscaled)
    other_rate = [block_output(dominated, gen, drop=0.2) for _ in range(3)]
    assert block.check(dominated, other_rate)
    mask = torch.rand(512, 512, generator=gen) >= P
    repeated = [block_output(dominated, gen, mask=mask) for _ in range(3)]
    assert block.check(dominated, repeated)


def test_products_on_bfloat16_operands_fail(dominated):
    gen = torch.Generator().manual_seed(0)
    runs = [block_output(dominated, gen, rounded_to_bfloat16) for _ in range(3)]
    assert block.check(dominated, runs)
