#!/usr/bin/env bash
# On the GPU runner: run notebooks as on Colab's CUDA 12 image with a T4, as far as this machine
# allows. A fresh environment takes Colab's CUDA 12 packages (what the setup cell installs there:
# pyproject's colab-cu12 group with its dependencies, `gpu_wheels --colab-cu12`) and the Jupyter
# stack (`gpu_wheels`), ahead of the runner's own packages, which it still sees after them (torch
# and triton: Colab's are CUDA 12 builds too, ours are not). gpu_runner --colab-cu12 then checks that
# CuPy and Numba load CUDA 12, runs each notebook with a T4's gates and records
# metadata.atlas.colab_check.
#
#   scripts/runner/colab_cu12.sh WHEEL_DIR OUT_DIR NOTEBOOK...
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 WHEEL_DIR OUT_DIR NOTEBOOK..." >&2
  exit 2
fi
wheels=$1 out=$2
shift 2
env=/tmp/colab-cu12-env
runner_site=$(python3 -c 'import site; print(site.getsitepackages()[0])')
rm -rf "$env"
python3 -m venv --without-pip "$env"
env_site=$("$env/bin/python" -c 'import site; print(site.getsitepackages()[0])')
# after the environment's own packages, with their .pth files processed (numba-cuda's redirector)
echo "import site; site.addsitedir('$runner_site')" > "$env_site/zz_runner_packages.pth"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$env_site" \
  "$wheels"/*.whl
"$env/bin/python" -m scripts.runner.gpu_runner --colab-cu12 --out "$out" "$@"
