"""Arguments and outputs as files between the evaluator and a candidate process.

A tree of tuples, lists, dicts, scalars, dtypes and tensors is stored as one torch.save file holding
a JSON description and a list of tensors; it is read back with weights_only=True, so a file a
candidate wrote can carry data but never code.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import torch

from evaluator.task import Inputs, TargetDevice

try:  # a CRC over hundreds of MB triples the cost of a save; these files live for seconds in /dev/shm
    from torch.utils.serialization import config as _serialization_config

    _serialization_config.save.compute_crc32 = False
except (ImportError, AttributeError):
    pass


class WireError(ValueError):
    """A value that cannot cross the process boundary, or a file that does not hold a valid tree."""


PLAIN_LEAVES = (torch.Tensor, bool, int, float, complex, str, type(None), torch.dtype, torch.device)
PLAIN_CONTAINERS = (tuple, list, dict)


def plain_problem(value: Any, depth: int = 0) -> str | None:
    """Why a candidate's return value is not plain data, or None. Judged by exact type, never by
    isinstance or by anything the value's own methods do: a subclass of a tensor or of a container
    could compute its contents when first touched (after the call's guard, outside any timing)."""
    kind = type(value)
    if kind in PLAIN_LEAVES:
        return None
    if kind in PLAIN_CONTAINERS and depth < 32:
        items = [*value.keys(), *value.values()] if kind is dict else value
        return next((problem for item in items if (problem := plain_problem(item, depth + 1))), None)
    return _not_plain(value)


def _not_plain(value: Any) -> str:
    kind = type(value)
    base = next((b for b in (torch.Tensor, *PLAIN_CONTAINERS) if isinstance(value, b)), None)
    what = f"a {kind.__name__}" + (f" (a {'tensor' if base is torch.Tensor else base.__name__} subclass)" if base else "")
    return (f"returned {what}; return plain torch.Tensor objects, or a plain tuple, list or dict of them "
            "(subclasses are refused, since their methods could compute after the call)")


def require_plain(value: Any) -> None:
    problem = plain_problem(value)
    if problem:
        raise WireError(problem)


def _encode(value: Any, tensors: list[torch.Tensor]) -> Any:
    if isinstance(value, torch.Tensor):
        return _encode_tensor(value, tensors)
    if isinstance(value, Inputs):
        return {"$inputs": [_encode(value.args, tensors), _encode(value.kwargs, tensors)]}
    if isinstance(value, tuple):
        return {"$tuple": [_encode(v, tensors) for v in value]}
    if isinstance(value, list):
        return [_encode(v, tensors) for v in value]
    if isinstance(value, dict):
        return {"$dict": [[k, _encode(v, tensors)] for k, v in value.items()]}
    return _encode_leaf(value)


def _encode_tensor(value: torch.Tensor, tensors: list[torch.Tensor]) -> dict[str, int]:
    if type(value) is not torch.Tensor:
        raise WireError(f"a {type(value).__name__} (a tensor subclass) cannot be returned; return a plain torch.Tensor")
    tensors.append(value.detach().cpu() if value.device.type != "cpu" else value.detach())
    return {"$t": len(tensors) - 1}


# Tried in order, by isinstance.
_LEAF_ENCODERS = (
    (torch.dtype, lambda value: {"$dtype": str(value).removeprefix("torch.")}),
    (TargetDevice, lambda value: {"$target_device": True}),
    (torch.device, lambda value: {"$device": str(value)}),
    ((type(None), bool, int, float, str), lambda value: value),
)


def _encode_leaf(value: Any) -> Any:
    encode = next((encode for kind, encode in _LEAF_ENCODERS if isinstance(value, kind)), None)
    if encode is None:
        raise WireError(f"cannot pass a value of type {type(value).__name__}")
    return encode(value)


def _decode(value: Any, tensors: list[torch.Tensor]) -> Any:
    if isinstance(value, list):
        return [_decode(v, tensors) for v in value]
    if not isinstance(value, dict):
        return _decode_scalar(value)
    if len(value) != 1:
        raise WireError("malformed wire tree")
    (key, body), = value.items()
    if key == "$tuple":
        return tuple(_decode(v, tensors) for v in body)
    if key == "$dict":
        return {str(k): _decode(v, tensors) for k, v in body}
    if key == "$inputs":
        return Inputs(tuple(_decode(body[0], tensors)), dict(_decode(body[1], tensors)))
    return _decode_leaf(key, body, tensors)


def _decode_scalar(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise WireError(f"unexpected {type(value).__name__} in a wire tree")


def _decode_leaf(key: str, body: Any, tensors: list[torch.Tensor]) -> Any:
    decode = _LEAF_DECODERS.get(key)
    if decode is None:
        raise WireError(f"unknown wire tag {key!r}")
    return decode(body, tensors)


def _decode_tensor(body: Any, tensors: list[torch.Tensor]) -> torch.Tensor:
    if not isinstance(body, int) or not 0 <= body < len(tensors):
        raise WireError("tensor reference out of range")
    return tensors[body]


def _decode_dtype(body: Any, tensors: list[torch.Tensor]) -> torch.dtype:
    dtype = getattr(torch, str(body), None)
    if not isinstance(dtype, torch.dtype):
        raise WireError(f"unknown dtype {body!r}")
    return dtype


_LEAF_DECODERS = {
    "$t": _decode_tensor,
    "$dtype": _decode_dtype,
    "$target_device": lambda body, tensors: TargetDevice(),
    "$device": lambda body, tensors: torch.device(str(body)),
}


def save(value: Any, path: Path) -> None:
    tensors: list[torch.Tensor] = []
    tree = _encode(value, tensors)
    torch.save({"tree": json.dumps(tree), "tensors": tensors}, path)


def open_regular(path: Path) -> int:
    """A descriptor for reading `path`, which a candidate's process could have replaced: only a
    regular file, never through a link, never a pipe that would block. OSError otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(0, "not a regular file")
    return fd


def load(path: Path, device: torch.device | str | None = None) -> Any:
    """The tree in `path`, read as data. A candidate's process may have put a link or a pipe there in
    place of its file: only a regular file is read, and never through a link."""
    name = Path(path).name
    payload = _payload(path, device)
    if not isinstance(payload, dict) or not isinstance(payload.get("tree"), str) or not isinstance(payload.get("tensors"), list):
        raise WireError(f"{name}: not a wire file")
    tensors = payload["tensors"]
    if not all(type(t) is torch.Tensor for t in tensors):
        raise WireError(f"{name}: holds something other than plain tensors")
    try:
        return _decode(json.loads(payload["tree"]), tensors)
    except WireError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RuntimeError) as exc:
        # a description the candidate's process wrote: too deep (RecursionError), or ill-typed
        raise WireError(f"{name}: malformed description ({type(exc).__name__})") from None


def _payload(path: Path, device: torch.device | str | None) -> Any:
    """What torch's weights-only loader reads from the regular file at `path`."""
    try:
        fd = open_regular(path)
    except OSError as exc:
        raise WireError(f"{Path(path).name}: unreadable ({exc.strerror})") from None
    try:
        return torch.load(f"/proc/self/fd/{fd}", map_location=device, weights_only=True, mmap=True)
    except Exception as exc:
        raise WireError(f"{Path(path).name}: unreadable ({type(exc).__name__}: {exc})") from exc
    finally:
        os.close(fd)
