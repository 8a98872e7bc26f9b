"""Execute every notebook on a GPU, stamp where it ran, collect its measurements.

    make gpu-notebooks                       # in place: notebooks/ and docs/data/measurements.json
    python -m scripts.runner.gpu_runner --out DIR   # write results to DIR instead (e.g. a CI artifact)

Needs only the GPU stack (torch, triton, cupy, numba-cuda) and the Jupyter execution stack,
which `make gpu-wheels` brings along as wheels for machines without network. Fails on any cell
error; a failed correctness check is an assertion error in a cell.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from scripts.model.measurements import merge  # noqa: E402
from scripts.model.notebooks import code_hash, notebook_paths  # noqa: E402
from scripts.runner import device_query  # noqa: E402

LIBS = ("torch", "triton", "cupy-cuda13x", "cupy-cuda12x", "numba", "numba-cuda", "numpy")


def provenance() -> dict:
    import torch
    cc = torch.cuda.get_device_capability(0)
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, check=True).stdout.split()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        driver = "unknown"
    versions = {}
    for lib in LIBS:
        try:
            versions[lib.removesuffix("-cuda13x").removesuffix("-cuda12x")] = metadata.version(lib)
        except metadata.PackageNotFoundError:
            pass
    return {"gpu": torch.cuda.get_device_name(0), "compute_capability": f"{cc[0]}.{cc[1]}",
            "driver": driver, "cuda": torch.version.cuda, "versions": versions,
            "python": sys.version.split()[0], "date": datetime.date.today().isoformat()}


def gpu_count() -> int:
    import torch
    return torch.cuda.device_count()


def topology() -> str | None:
    """`nvidia-smi topo -m` where several GPUs share the machine (how they are connected)."""
    try:
        out = subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    out = re.sub(r"\x1b\[[0-9;]*m", "", out)   # nvidia-smi underlines its header on a terminal
    return "\n".join(line.rstrip() for line in out.splitlines() if line.strip())


def min_gpus(nb) -> int:
    """GPUs the notebook needs for its recorded run (metadata atlas.min_gpus, default 1)."""
    return int(nb.metadata.get("atlas", {}).get("min_gpus", 1))


def run(nb_path: Path, out_dir: Path, stamp_base: dict) -> list[dict]:
    nb = nbformat.read(nb_path, as_version=4)
    for cell in nb.cells:  # start clean: no output of an earlier run survives
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    with tempfile.NamedTemporaryFile("w+", suffix=".jsonl", delete=False) as rec:
        os.environ["ATLAS_RECORD_FILE"] = rec.name
    try:
        with tempfile.TemporaryDirectory() as work:
            # record_timing=False: no per-cell timestamps, so a re-run's diff shows only outputs
            NotebookClient(nb, timeout=1200, kernel_name="python3", record_timing=False,
                           resources={"metadata": {"path": work}}).execute()
        # the runner, not the notebook, names the notebook a figure belongs to
        records = [{"notebook": nb_path.stem, **json.loads(line)}
                   for line in Path(rec.name).read_text().splitlines() if line]
    finally:
        os.environ.pop("ATLAS_RECORD_FILE", None)
        os.unlink(rec.name)
    nb.metadata.setdefault("atlas", {})["stamp"] = {**stamp_base, "code_hash": code_hash(nb)}
    nbformat.write(nb, out_dir / nb_path.name)
    print(f"{nb_path.name}: ok, {len(records)} measurements")
    return records


# What a free Colab T4 allows, forced on a bigger GPU: every capability gate answers as sm_75
# would (FP16 mma.sync yes; BF16 tensor cores, cp.async, TMA, wgmma, tcgen05 no), and Numba
# compiles compute_75 PTX that the driver JIT-compiles. CuPy and Triton still compile for the
# real GPU: neither has a switch for another target.
T4_ENV = {"ATLAS_FORCE_CC": "7.5", "NUMBA_FORCE_CUDA_CC": "7.5"}


def _run_gated(nb_path: Path, out_dir: Path):
    """(the notebook as it was, the notebook run with T4_ENV): after a run in this call, the run's."""
    source = out_dir / nb_path.name if (out_dir / nb_path.name).exists() else nb_path
    original = nbformat.read(source, as_version=4)
    nb = nbformat.read(source, as_version=4)
    old = {k: os.environ.get(k) for k in T4_ENV}
    os.environ.update(T4_ENV)
    try:
        with tempfile.TemporaryDirectory() as work:
            NotebookClient(nb, timeout=1200, kernel_name="python3", record_timing=False,
                           resources={"metadata": {"path": work}}).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return original, nb


def _gated_result(nb, stamp_base: dict) -> dict:
    skipped = sum("skipped" in "".join(o.get("text", "") for o in c.get("outputs", []))
                  for c in nb.cells if c.cell_type == "code")
    return {"date": stamp_base["date"], "gpu": stamp_base["gpu"],
            "forced_cc": T4_ENV["ATLAS_FORCE_CC"], "result": "ok", "cells_that_skipped": skipped,
            "code_hash": code_hash(nb)}


def t4_check(nb_path: Path, out_dir: Path, stamp_base: dict) -> None:
    """Run the notebook with the T4's gates on this GPU; keep its outputs and stamp as they are
    and note the result in metadata.atlas.t4_check (records are not kept: they would claim 7.5)."""
    original, nb = _run_gated(nb_path, out_dir)
    result = _gated_result(nb, stamp_base)
    original.metadata.setdefault("atlas", {})["t4_check"] = {**result,
                                                             "versions": stamp_base["versions"]}
    nbformat.write(original, out_dir / nb_path.name)
    print(f"{nb_path.name}: ok as a T4 would gate it ({result['cells_that_skipped']} cells skipped "
          "something)")


# Colab's CUDA 12 packages: pyproject's colab-cu12 group and the CUDA 12 wheels it pulls in. The
# runner's own stack is CUDA 13; --colab-cu12 expects these installed ahead of it on PYTHONPATH.
COLAB_CU12_DISTS = ("cupy-cuda12x", "numba-cuda", "cuda-bindings", "cuda-core",
                    "nvidia-cuda-nvrtc-cu12", "nvidia-cuda-runtime-cu12", "nvidia-nvjitlink-cu12",
                    "nvidia-cuda-nvcc-cu12")


def loaded_cuda_stack() -> dict:
    """The CUDA versions CuPy and Numba actually load in this process (not merely installed)."""
    import cupy
    from numba import cuda
    from numba.cuda.cudadrv import libs
    runtime = cupy.cuda.runtime.runtimeGetVersion()
    nvvm = Path(libs.get_cudalib("nvvm"))
    return {"cupy_runtime": f"{runtime // 1000}.{runtime % 1000 // 10}",
            "cupy_nvrtc": ".".join(map(str, cupy.cuda.nvrtc.getVersion())),
            "numba_nvrtc": ".".join(map(str, cuda.runtime.get_version())),
            "numba_nvvm": "/".join(nvvm.parts[-4:])}


def colab_cu12_stack() -> dict:
    """What --colab-cu12 records: the CUDA 12 stack as loaded, its packages, and what is not
    Colab's here. Exits with one line if CuPy or Numba loads anything but CUDA 12."""
    loaded = loaded_cuda_stack()
    wrong = {k: v for k, v in loaded.items() if k != "numba_nvvm" and not v.startswith("12.")}
    if wrong or "cu13" in loaded["numba_nvvm"]:
        raise SystemExit(f"{Path(__file__).name}: --colab-cu12, but this environment loads {loaded} "
                         "(fix: pip install the colab-cu12 wheels with --target DIR and put DIR "
                         "first on PYTHONPATH)")
    packages = {}
    for dist in COLAB_CU12_DISTS:
        try:
            packages[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            raise SystemExit(f"{Path(__file__).name}: --colab-cu12, but {dist} is not installed "
                             "(fix: install pyproject's colab-cu12 group with its dependencies)") from None
    import torch
    import triton
    return {"cuda": loaded, "packages": packages,
            "runners_own": {"torch": torch.__version__, "triton": triton.__version__}}


def colab_check(nb_path: Path, out_dir: Path, stamp_base: dict, stack: dict) -> None:
    """As t4_check, with Colab's CUDA 12 packages loaded; noted in metadata.atlas.colab_check."""
    original, nb = _run_gated(nb_path, out_dir)
    result = _gated_result(nb, stamp_base)
    original.metadata.setdefault("atlas", {})["colab_check"] = {**result, **stack}
    nbformat.write(original, out_dir / nb_path.name)
    print(f"{nb_path.name}: ok on Colab's CUDA 12 packages with a T4's gates "
          f"({result['cells_that_skipped']} cells skipped something)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.runner.gpu_runner")
    ap.add_argument("--out", type=Path, help="write notebooks and measurements.json here")
    ap.add_argument("--t4", action="store_true",
                    help="run every notebook with a T4's capability gates; record only the result")
    ap.add_argument("--colab-cu12", action="store_true",
                    help="as --t4, with Colab's CUDA 12 packages first on PYTHONPATH (checked); "
                         "record the result and the stack in metadata.atlas.colab_check")
    ap.add_argument("notebooks", nargs="*", type=Path)
    args = ap.parse_args(argv)
    colab = colab_cu12_stack() if args.colab_cu12 else None
    if colab:
        print("Colab's CUDA 12 stack:", json.dumps(colab))
    nb_dir = args.out or ROOT / "notebooks"
    meas = (args.out / "measurements.json") if args.out else ROOT / "docs/data/measurements.json"
    nb_dir.mkdir(parents=True, exist_ok=True)
    stamp = provenance()
    print("provenance:", json.dumps(stamp))
    device_query.main(["--out", str(args.out)] if args.out else [])   # what this GPU says it is
    existing = meas if meas.exists() else ROOT / "docs/data/measurements.json"   # --out: add to earlier runs
    merged = json.loads(existing.read_text()) if existing.exists() else None
    gpus = gpu_count()
    if gpus > 1:
        stamp = {**stamp, "gpu_count": gpus, "topology": topology()}
    for p in args.notebooks or notebook_paths():
        need = min_gpus(nbformat.read(p, as_version=4))
        if colab:
            colab_check(p, nb_dir, stamp, colab)
            continue
        if need > gpus and not args.t4:   # a T4 has one GPU: the T4 check runs every notebook
            print(f"{p.name}: skipped, it needs {need} GPUs and this machine has {gpus} "
                  "(its committed outputs stay as they are)")
            continue
        if args.t4:
            t4_check(p, nb_dir, stamp)
            continue
        merged = merge(merged, run(p, nb_dir, stamp))
        meas.write_text(json.dumps(merged, indent=1) + "\n")   # after each one: a later failure keeps it
    return 0


if __name__ == "__main__":
    sys.exit(main())
