"""The typed messages between the evaluator and a candidate's process: what parses and what does not."""

import json

import pytest

from evaluator import protocol
from evaluator.result import KernelInfo

CALL = {"event": "call", "case": 3, "run": 1, "file": "/x/case3_run1.pt", "launches": 2, "violations": [],
        "new_threads": 0, "mutated": [], "seconds": 0.25}


@pytest.mark.parametrize("message", [
    protocol.Imported(),
    protocol.Failed(phase="call", verdict="RUNTIME_FAIL", reason="raised ValueError", case=2, run=0),
    protocol.CallDone(case=1, run=0, file="f", launches=1, violations=("aten.add",), new_threads=0, mutated=(),
                      seconds=0.5),
    protocol.CasesDone(kernels=(KernelInfo("k", registers=32),), compile_seconds=1.0, scout_wait_seconds=0.0),
    protocol.Timed(samples_ms=(0.5, 0.6), probe_ms=(0.55,), side_stream=False, calls_without_launch=0,
                   violations=()),
    protocol.Scouted(compiled=2, failed=0),
])
def test_every_event_survives_the_wire(message):
    assert protocol.parse_event(json.loads(json.dumps(protocol.encode(message)))) == message


@pytest.mark.parametrize("command", [
    protocol.RunCase(index=4, inputs="/in.pt"), protocol.CasesEnd(),
    protocol.TimeCalls(sets=("a", "b"), probes=("c",), policy={"min_reps": 5}),
])
def test_every_command_survives_the_wire(command):
    assert protocol.parse_command(json.loads(json.dumps(protocol.encode(command)))) == command


@pytest.mark.parametrize("change, fragment", [
    ({"launches": True}, "CallDone.launches is not a int"),
    ({"launches": 1.0}, "CallDone.launches is not a int"),
    ({"seconds": float("nan")}, "CallDone.seconds is not a float"),
    ({"violations": "aten.add"}, "CallDone.violations is not a list"),
    ({"violations": [1]}, "CallDone.violations is not a str"),
    ({"extra": 1}, "has no field 'extra'"),
    ({"event": "calls"}, "unknown message"),
    ({"file": "x" * (protocol.MAX_TEXT + 1)}, "CallDone.file is not a str"),
])
def test_a_malformed_event_is_refused(change, fragment):
    with pytest.raises(protocol.ProtocolError, match=fragment):
        protocol.parse_event({**CALL, **change})


def test_missing_fields_and_nested_records_are_checked():
    with pytest.raises(protocol.ProtocolError, match="lacks 'launches'"):
        protocol.parse_event({k: v for k, v in CALL.items() if k != "launches"})
    done = {"event": "cases_done", "compile_seconds": 0.0, "scout_wait_seconds": 0.0,
            "kernels": [{"name": "k", "registers": "many"}]}
    with pytest.raises(protocol.ProtocolError, match="KernelInfo.registers"):
        protocol.parse_event(done)
    with pytest.raises(protocol.ProtocolError, match="not a JSON object"):
        protocol.parse_event(["call"])


def test_a_job_crosses_as_its_type_and_is_read_back_strictly(tmp_path):
    job = protocol.Job(task="Activation/gelu", device="cpu", entry="gelu", mutates=(0,), allowed_aten=("aten::add",),
                       gpu_memory_fraction=0.6, triton_target={"backend": "cuda", "arch": 90, "warp_size": 32})
    path = tmp_path / "job.json"
    protocol.write_job(job, path)
    assert protocol.read_job(path) == job
    for bad in ({"task": "t"}, {"task": "t", "device": "cpu", "extra": 1},
                {"task": "t", "device": "cpu", "mutates": [True]}, {"task": "t", "device": "cpu", "check_memory": "yes"}):
        path.write_text(json.dumps(bad))
        with pytest.raises(protocol.ProtocolError):
            protocol.read_job(path)


def test_the_fork_servers_messages_cross_as_their_types_and_are_read_strictly():
    spawn = protocol.Spawn(id=7, kind="candidate", scratch="/s", limits={"CPU": 60, "AS": None},
                           writable=("/w",), readable=("/r",), emptied=("/hidden",), gpu=True, triton_cache="/t")
    assert protocol.parse_spawn(json.loads(json.dumps(protocol.encode(spawn)))) == spawn
    for event in (protocol.ServerReady(pid=10), protocol.Spawned(id=7, pid=11),
                  protocol.Exited(pid=11, code=None, signal=9)):
        assert protocol.parse_server_event(json.loads(json.dumps(protocol.encode(event)))) == event
    plain = protocol.encode(spawn)
    for change, fragment in (({"gpu": "yes"}, "Spawn.gpu"), ({"id": True}, "Spawn.id"),
                             ({"emptied": "/hidden"}, "Spawn.emptied"), ({"extra": 1}, "no field")):
        with pytest.raises(protocol.ProtocolError, match=fragment):
            protocol.parse_spawn({**plain, **change})
    with pytest.raises(protocol.ProtocolError, match="unknown message"):
        protocol.parse_server_event({"event": "spawn", "id": 1})
