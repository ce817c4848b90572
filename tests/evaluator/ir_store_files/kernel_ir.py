"""Run in a process of its own: the test kernel compiled by Triton's JIT path (compile-only driver,
arch 90); prints its Triton IR, launch options and cubin (hex) as JSON."""

import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))
os.environ.pop("TRITON_INTERPRET", None)
os.environ["TRITON_CACHE_DIR"] = cache = tempfile.mkdtemp()

import torch  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.runtime.driver import driver  # noqa: E402

from evaluator.compile_scout import CompileOnlyDriver  # noqa: E402
from evaluator.ir_store import OPTIONS  # noqa: E402

driver.set_active(CompileOnlyDriver(GPUTarget("cuda", 90, 32)))
from kernel import scaled_exp  # noqa: E402

meta = torch.device("meta")
scaled_exp.warmup(torch.empty(100, device=meta), torch.empty(100, device=meta), 100, B=128, grid=(1,))
files = {p.name.rsplit(".", 1)[-1]: p for p in Path(cache).glob("*/*") if not p.name.startswith("__grp__")}
options = {k: v for k, v in json.loads(files["json"].read_text()).items() if k in OPTIONS}
print(json.dumps({"ir": files["ttir"].read_text(), "options": options, "cubin": files["cubin"].read_bytes().hex()}))
