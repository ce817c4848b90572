#!/usr/bin/env bash
# Ray and its dependencies for the GPU machine (Python 3.12), into .whl-ray/ (git-ignored). Ray's wheel
# is larger than one device call may carry, so it is split into parts of PART_MB (default 40) MiB,
# each carried by its own call while the machine stays warm, gathered there and put together by
# benchmarks/ray_on_device.sh, which checks the wheel against the SHA-256 written here.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(python3 -c "import ray; print(ray.__version__)" 2>/dev/null || .venv/bin/python -c "import ray; print(ray.__version__)")
rm -rf .whl-ray && mkdir -p .whl-ray/deps .whl-ray/download
python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d .whl-ray/download "ray==$version"
wheel=$(ls .whl-ray/download/ray-*.whl)
mv .whl-ray/download/*.whl .whl-ray/deps/ 2>/dev/null || true
mv ".whl-ray/deps/$(basename "$wheel")" .whl-ray/
rmdir .whl-ray/download
(cd .whl-ray && sha256sum "$(basename "$wheel")" > SHA256SUMS && split -b "${PART_MB:-40}M" -d "$(basename "$wheel")" part- \
  && rm "$(basename "$wheel")")
ls -la .whl-ray .whl-ray/deps
