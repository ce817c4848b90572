"""A candidate's return value crosses as plain data only: judged by exact type, before anything
touches it, so no subclass's methods run after the call."""

import pytest
import torch

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
