#!/usr/bin/env bash
# On the GPU machine, repo root: `gather` keeps the parts of Ray's wheel this call carried
# (.whl-ray/part-*, from benchmarks/fetch_ray_wheels.sh) in /tmp/ray-parts, which outlives the call
# while the machine stays warm; `install` puts the wheel together once every part is there, checks
# its SHA-256 and installs it into the machine's Python (a disposable machine), taking from the
# carried dependencies only those the machine lacks.
set -euo pipefail
parts=/tmp/ray-parts
mkdir -p "$parts"
case ${1:-} in
  gather)
    cp -n .whl-ray/part-* "$parts"/ 2>/dev/null || true
    cp -n .whl-ray/SHA256SUMS "$parts"/ 2>/dev/null || true
    if [ -d .whl-ray/deps ]; then mkdir -p "$parts/deps" && cp -n .whl-ray/deps/*.whl "$parts/deps"/; fi
    ls "$parts" ;;
  install)
    wheel=$(cut -d' ' -f3 "$parts/SHA256SUMS")
    cat "$parts"/part-* > "$parts/$wheel"
    (cd "$parts" && sha256sum -c SHA256SUMS)
    python3 -m pip install -q --no-index --find-links "$parts/deps" --no-cache-dir --break-system-packages \
      "$parts/$wheel"
    python3 -c "import ray; print('ray', ray.__version__)" ;;
  *)
    echo "usage: bash benchmarks/ray_on_device.sh gather|install" >&2; exit 2 ;;
esac
