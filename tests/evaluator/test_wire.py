"""Values crossing the process boundary (wire.py): plain data only, judged by exact type before
anything touches it, so no subclass's methods run after the call; wire files keep layout and markers
and refuse what is not theirs."""

import pytest
import torch

from evaluator import wire
from evaluator.task import DEVICE, Inputs
from evaluator.wire import plain_problem


class Lazy(torch.Tensor):
    pass


class Deferred(tuple):
    pass


@pytest.mark.parametrize("value", [
    torch.ones(2), (torch.ones(2), [torch.zeros(1), None]), {"q": torch.ones(1), "n": 3}, 1.5, True,
    torch.float16, "mean",
])
def test_plain_values_pass(value):
    assert plain_problem(value) is None


@pytest.mark.parametrize("value, named", [
    (torch.ones(2).as_subclass(Lazy), "a Lazy (a tensor subclass)"),
    (torch.nn.Parameter(torch.ones(2)), "a Parameter (a tensor subclass)"),
    (Deferred((torch.ones(1),)), "a Deferred (a tuple subclass)"),
    ((torch.ones(1), [Deferred()]), "a Deferred (a tuple subclass)"),
    ({"x": torch.ones(1).as_subclass(Lazy)}, "a Lazy"),
    (object(), "a object"),
])
def test_subclasses_and_other_objects_are_named(value, named):
    assert named in plain_problem(value)


def test_a_subclass_is_refused_without_running_its_methods():
    class Trap(tuple):
        def __iter__(self):
            raise AssertionError("iterated")

        def __len__(self):
            raise AssertionError("measured")

    assert "Trap (a tuple subclass)" in plain_problem(Trap())


def test_wire_round_trip_keeps_layout_and_markers(tmp_path):
    base = torch.randn(4, 6)
    inputs = Inputs((base.t(), 3, None, [1.5, "s"]), {"dtype": torch.float16, "device": DEVICE, "flag": True})
    wire.save(inputs, tmp_path / "x.pt")
    back = wire.load(tmp_path / "x.pt")
    assert isinstance(back, Inputs) and back.kwargs["device"] == DEVICE and back.kwargs["dtype"] is torch.float16
    assert torch.equal(back.args[0], base.t()) and back.args[0].stride() == base.t().stride()
    assert back.args[1:] == (3, None, [1.5, "s"])


def test_wire_refuses_subclasses_and_foreign_files(tmp_path):
    class Lazy(torch.Tensor):
        pass
    with pytest.raises(wire.WireError, match="tensor subclass"):
        wire.save(torch.zeros(2).as_subclass(Lazy), tmp_path / "y.pt")
    (tmp_path / "bad.pt").write_bytes(b"not a file")
    with pytest.raises(wire.WireError, match="unreadable"):
        wire.load(tmp_path / "bad.pt")
    torch.save({"tree": "{\"$evil\": 1}", "tensors": []}, tmp_path / "tag.pt")
    with pytest.raises(wire.WireError, match="unknown wire tag"):
        wire.load(tmp_path / "tag.pt")
