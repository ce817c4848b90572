#!/usr/bin/env bash
# Wheels the GPU machine lacks (it has torch, triton, numpy, scipy, pandas, statsmodels, jinja2,
# rich, typer, httpx, transformers, pyarrow, matplotlib): fetched here into .whl/ (git-ignored),
# copied to the GPU machine with the checkout, installed by gpu_checks.sh and gpu_suite.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d .whl radon==6.0.1 mando==0.7.1 structlog==26.1.0 tenacity==9.2.1 pyseccomp==0.1.2 py-spy==0.4.3
ls .whl
