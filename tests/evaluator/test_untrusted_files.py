"""Files a candidate's process could have replaced are read only as regular files, never through a
link and never from a pipe (which would block the evaluator)."""

import os

import pytest
import torch

from evaluator import wire
from evaluator.sandbox import read_tail


def test_wire_files_are_read_only_when_regular(tmp_path):
    real = tmp_path / "real.pt"
    wire.save({"out": torch.ones(3)}, real)
    assert torch.equal(wire.load(real)["out"], torch.ones(3))
    link = tmp_path / "link.pt"
    link.symlink_to(real)
    with pytest.raises(wire.WireError, match="unreadable"):
        wire.load(link)
    fifo = tmp_path / "fifo.pt"
    os.mkfifo(fifo)
    with pytest.raises(wire.WireError, match="not a regular file"):
        wire.load(fifo)


def test_output_tails_are_read_only_from_regular_files(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not show")
    (tmp_path / "output.txt").symlink_to(secret)
    assert read_tail(tmp_path / "output.txt", 100) == b""
    os.mkfifo(tmp_path / "pipe.txt")
    assert read_tail(tmp_path / "pipe.txt", 100) == b""
    (tmp_path / "real.txt").write_bytes(b"x" * 50 + b"last words")
    assert read_tail(tmp_path / "real.txt", 10) == b"last words"


@pytest.mark.parametrize("tree", ['{"$tuple": 5}', '{"$inputs": 3}', '{"$device": "bad"}', '{"$tensor": "x"}',
                                  '[' * 100000 + ']' * 100000, '{"$tuple": [' * 2000 + ']}' * 2000, 'not json'])
def test_a_malformed_description_is_a_wire_error_not_the_evaluators(tmp_path, tree):
    path = tmp_path / "out.pt"
    torch.save({"tree": tree, "tensors": []}, path)
    with pytest.raises(wire.WireError):
        wire.load(path)
