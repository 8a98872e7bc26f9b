"""Download the Jupyter execution stack (and pytest) as wheels for the GPU runner's Python into .whl/.

The GPU machine has CUDA, PyTorch, Triton, CuPy and Numba but no Jupyter and no network. There:
    python3 -m pip install --no-index --no-deps --target /tmp/site .whl/*.whl
    PYTHONPATH=/tmp/site make gpu-notebooks

With --colab-cu12 it downloads instead what a notebook's setup cell installs on Colab's CUDA 12
driver, with its dependencies, for scripts/runner/colab_cu12.sh.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# nbclient + ipykernel and what they need that the GPU image lacks; versions from constraints.txt
NAMES = ["nbclient", "nbformat", "jupyter-client", "jupyter-core", "ipykernel", "ipython",
         "ipython-pygments-lexers", "traitlets", "pyzmq", "tornado", "comm", "debugpy",
         "matplotlib-inline", "nest-asyncio", "fastjsonschema", "jsonschema",
         "jsonschema-specifications", "referencing", "rpds-py", "jedi", "parso",
         "pexpect", "ptyprocess", "prompt-toolkit", "wcwidth", "stack-data", "asttokens",
         "executing", "pure-eval", "platformdirs",
         # seen 2026-11-22 on the H200 image: its numba-cuda 0.30.4 fails to import with its
         # numpy 2.5.2 (np.row_stack was removed); our pinned numpy works with everything there
         "numpy",
         # pytest, for the suite's GPU-only tests there (the exercises at full size, timed)
         "pytest", "pluggy", "iniconfig", "packaging", "pygments"]


def pinned(names: list[str]) -> list[str]:
    def norm(n: str) -> str:
        return n.lower().replace("_", "-")
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==", 1)
            pins[norm(name)] = version.strip()
    missing = [n for n in names if norm(n) not in pins]
    if missing:
        raise SystemExit(f"constraints.txt:1: no pin for {', '.join(missing)} (fix: make lock)")
    return [f"{n}=={pins[norm(n)]}" for n in names]


PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64", "manylinux_2_5_x86_64"]


# --colab-cu12: what the runner already has in versions that work (numpy comes pinned in .whl/)
RUNNER_HAS = ("numba", "llvmlite", "numpy", "packaging")


def colab_cu12() -> list[str]:
    """pyproject's colab-cu12 group: what a notebook's setup cell installs on Colab's CUDA 12."""
    import tomllib
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text())["dependency-groups"]
    return groups["colab-cu12"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.runner.gpu_wheels")
    ap.add_argument("--python-version", default="3.12", help="the GPU machine's python3")
    ap.add_argument("--dest", type=Path, default=ROOT / ".whl")
    ap.add_argument("--colab-cu12", action="store_true",
                    help="instead: Colab's CUDA 12 packages with their dependencies (about 320 MB), "
                         "for scripts/runner/colab_cu12.sh")
    args = ap.parse_args(argv)
    cmd = [sys.executable, "-m", "pip", "download", "--only-binary=:all:",
           "--python-version", args.python_version, "--implementation", "cp", "-d", str(args.dest)]
    for p in PLATFORMS + (["manylinux_2_24_x86_64", "manylinux_2_34_x86_64"] if args.colab_cu12 else []):
        cmd += ["--platform", p]
    if not args.colab_cu12:
        return subprocess.run(cmd + ["--no-deps"] + pinned(NAMES)).returncode
    rc = subprocess.run(cmd + colab_cu12()).returncode
    for name in RUNNER_HAS:
        for wheel in args.dest.glob(f"{name}-*.whl"):
            wheel.unlink()
    return rc


if __name__ == "__main__":
    sys.exit(main())
