# Sourced by the GPU scripts (repo root, on the GPU machine): installs the carried wheels (.whl/,
# from benchmarks/fetch_device_wheels.sh) into /tmp/site, byte-compiles the machine's packages once
# (they come without .pyc files), and writes the machine and versions to $1.
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
if [ ! -e /tmp/compiled ]; then
  site=$(python3 -c "import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))")
  python3 -m compileall -q -j 16 "$site/torch" "$site/triton" "$site/scipy" "$site/numpy" >/dev/null 2>&1
  python3 -c "import torch, triton, torch._dynamo, scipy.stats" && touch /tmp/compiled
fi
{
  date -u +%FT%TZ; id; uname -r
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"
  ldconfig -p | grep -c seccomp | sed 's/^/libseccomp entries: /'
  nproc | sed 's/^/CPUs: /'
  for folder in /dev/shm /tmp; do  # scratch folders: in memory (tmpfs) or on a disk
    echo "$folder: $(stat -f -c %T "$folder" 2>/dev/null), $(df -h --output=size,avail "$folder" 2>/dev/null | tail -1)"
  done
  git log -1 --format=%h 2>/dev/null || true
} | tee "$1"
