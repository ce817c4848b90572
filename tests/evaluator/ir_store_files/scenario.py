"""Run in a process of its own (Triton's compile-only driver, no interpreter): a kernel compiled
by the JIT path into one cache; its IR compiled alone; the same kernel compiled again into a fresh
cache with the scout's stored stages answering from that compile. Prints what the test compares."""

import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
os.environ.pop("TRITON_INTERPRET", None)
os.environ["TRITON_CACHE_DIR"] = first_cache = tempfile.mkdtemp()

import torch  # noqa: E402
from triton import knobs  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.backends.nvidia.compiler import CUDABackend  # noqa: E402
from triton.runtime.driver import driver  # noqa: E402

from evaluator.compile_scout import CompileOnlyDriver, StoredStages  # noqa: E402
from evaluator.ir_store import OPTIONS  # noqa: E402
from evaluator.sandboxed.ir_compile_process import compile_ir  # noqa: E402

TARGET = {"backend": "cuda", "arch": 90, "warp_size": 32}
driver.set_active(CompileOnlyDriver(GPUTarget(**TARGET)))


def kernel(name: str):
    spec = importlib.util.spec_from_file_location(name, HERE / "kernel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.scaled_exp


def compile_into(cache: str, name: str, num_warps: int) -> dict[str, bytes]:
    knobs.cache.dir = cache
    meta = torch.device("meta")
    kernel(name).warmup(torch.empty(100, device=meta), torch.empty(100, device=meta), 100, B=128, grid=(1,),
                        num_warps=num_warps)
    return {path.name.rsplit(".", 1)[-1]: path.read_bytes() for path in Path(cache).glob("*/*")
            if not path.name.startswith("__grp__")}


num_warps = int(sys.argv[1])
direct = compile_into(first_cache, "first", num_warps)
options = {name: value for name, value in json.loads(direct["json"]).items() if name in OPTIONS}
alone = compile_ir(direct["ttir"].decode(), options, TARGET, Path(tempfile.mkdtemp()))
asked, llvm_runs = [], []
original_llir = CUDABackend.make_llir


def counted_llir(*args, **kwargs):
    llvm_runs.append(1)
    return original_llir(*args, **kwargs)


CUDABackend.make_llir = counted_llir
StoredStages(lambda text, sent: asked.append(sent) or (alone if text == direct["ttir"].decode() else None)).install()
answered = compile_into(tempfile.mkdtemp(), "second", num_warps)
print(json.dumps({
    "same": {ext: answered.get(ext) == content for ext, content in direct.items() if ext != "json"},
    "same_metadata": json.loads(answered["json"]) == json.loads(direct["json"]),
    "asked": asked, "llvm_runs": len(llvm_runs), "options": options,
}))
