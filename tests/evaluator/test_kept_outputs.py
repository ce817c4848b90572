"""Copies of passed outputs (what timed calls are held to) stay within their bound in bytes, and
their bytes count only while the copies live."""

import gc

import torch

from evaluator.kept_outputs import KeptOutputs


def test_copies_are_bounded_and_released_when_gone():
    kept = KeptOutputs(limit=1000)
    original = (torch.arange(100, dtype=torch.float32), {"b": torch.zeros(50, dtype=torch.int16)})
    copy = kept.copy(original)
    assert kept.held == 500
    assert torch.equal(copy[0], original[0]) and copy[0].data_ptr() != original[0].data_ptr()
    original[0][0] = -1.0
    assert copy[0][0] == 0.0, "a copy, not a view of what the candidate's file holds"
    assert kept.copy(torch.zeros(126, dtype=torch.float32)) is None, "504 bytes more would pass the bound"
    assert kept.held == 500
    del copy
    gc.collect()
    assert kept.held == 0
    assert kept.copy(torch.zeros(250, dtype=torch.float32)) is not None
