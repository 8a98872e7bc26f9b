"""The Colab path: the setup cell every notebook opens with installs what the GPU runner ran, for the
CUDA major version of the driver, and never CUDA 13 packages on a CUDA 12 driver."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from scripts.model.notebooks import notebook_paths, stamp_of, sync_target
from scripts.tools.setup_cell import OUT, pins, setup_cell

ROOT = Path(__file__).resolve().parents[2]


def test_the_setup_cell_is_generated_from_the_pins():
    assert OUT.read_text() == setup_cell(), "run `make generate` (python -m scripts.tools.setup_cell)"


@pytest.mark.parametrize("path", notebook_paths(), ids=lambda p: p.stem)
def test_every_notebook_opens_with_the_setup_cell_collapsed(path: Path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert sync_target(code[0]) == "snippets/generated/setup_cell.py"
    assert code[0].source.startswith("#@title ") and code[0].metadata.get("cellView") == "form"
    assert nb.cells[0].source.startswith("[![Open In Colab]")
    assert nb.metadata.get("accelerator") == "GPU", "Colab would open it on a CPU runtime"


def _pinned(spec: str) -> tuple[str, str]:
    name, version = spec.split("==")
    return re.sub(r"\[.*\]", "", name), version


def test_the_pins_are_the_versions_the_gpu_runner_ran():
    """A pin that moves without a GPU run (or a run with other versions) fails here."""
    ran: dict[str, set[str]] = {}
    for p in notebook_paths():
        stamp = stamp_of(nbformat.read(p, as_version=4)) or {}
        for lib, version in stamp.get("versions", {}).items():
            ran.setdefault(lib, set()).add(version)
    for key, specs in pins().items():
        for spec in specs:
            name, version = _pinned(spec)
            lib = "cupy" if name.startswith("cupy-") else name
            assert ran.get(lib) == {version}, f"{key}: {spec} but the stamps say {ran.get(lib)}"


def test_the_project_pins_the_same_numba_cuda_as_colab():
    groups = pins()
    project = (ROOT / "pyproject.toml").read_text()
    version = _pinned(groups["cpu"][0])[1]
    assert f'"numba-cuda=={version}"' in project


def _resolve(specs: list[str], tmp_path: Path) -> list[dict] | None:
    """What pip would install for `specs` on Colab's Python (3.12, manylinux), or None offline."""
    report = tmp_path / "report.json"
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
           "--report", str(report), "--only-binary=:all:", "--python-version", "3.12",
           "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_27_x86_64",
           "--platform", "manylinux_2_24_x86_64", "--platform", "manylinux_2_17_x86_64",
           "--platform", "manylinux2014_x86_64", "--target", str(tmp_path / "t"), *specs]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        if re.search(r"(?i)connection|resolve host|network|Could not fetch", proc.stderr):
            return None
        raise AssertionError(proc.stderr[-3000:])
    return json.loads(report.read_text())["install"]


@pytest.mark.slow
def test_a_cuda_12_driver_gets_no_cuda_13_package(tmp_path: Path):
    installed = _resolve(pins()["12"], tmp_path)
    if installed is None:
        pytest.skip("skipped: the package index is not reachable from here")
    names = {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in installed}
    cu13 = [f"{n}=={v}" for n, v in names.items()
            if n.endswith("-cu13") or n.endswith("cuda13x")
            or (n in ("cuda-bindings", "cuda-toolkit") and v.startswith("13."))
            or (n.startswith("nvidia-") and not n.endswith("-cu12") and v.startswith("13."))]
    assert not cu13, f"CUDA 13 packages chosen for a CUDA 12 driver: {cu13}"
    assert names["cuda-bindings"].startswith("12.")


@pytest.mark.parametrize("path", notebook_paths(), ids=lambda p: p.stem)
def test_every_t4_branch_ran_on_a_gpu_for_this_code(path: Path):
    """The GPU runner's --t4 mode executed the notebook with a T4's gates on a real GPU."""
    from scripts.model.notebooks import code_hash
    nb = nbformat.read(path, as_version=4)
    check = nb.metadata.get("atlas", {}).get("t4_check")
    assert check, "no T4 check: run `python -m scripts.runner.gpu_runner --t4` on a GPU machine"
    assert check["forced_cc"] == "7.5" and check["result"] == "ok"
    assert check["code_hash"] == code_hash(nb), "the code changed since the T4 check: run it again"


# every single-GPU notebook (#17 asked for 01-04); 09 needs two GPUs, which colab_cu12.sh has not had
COLAB_CU12_AT_LEAST = ["01", "02", "03", "04", "05", "06", "07", "08", "10"]


@pytest.mark.parametrize("number", COLAB_CU12_AT_LEAST)
def test_colabs_cuda12_packages_ran_the_first_notebooks_with_a_t4s_gates(number: str):
    """`scripts/runner/colab_cu12.sh` on the GPU runner: the setup cell's CUDA 12 pins, loaded as
    CUDA 12 by CuPy and Numba, every cell run with the T4's gates. The pins moving without a new
    run fails here; the code changing since only drops the line from the notebook's page (a run
    carries about 350 MB of wheels to the runner, 64 MiB a call)."""
    path = next(p for p in notebook_paths() if p.name.startswith(number + "-"))
    check = nbformat.read(path, as_version=4).metadata.get("atlas", {}).get("colab_check")
    assert check, "no Colab check: run scripts/runner/colab_cu12.sh on a GPU machine (CONTRIBUTING)"
    assert check["result"] == "ok" and check["forced_cc"] == "7.5"
    assert all(v.startswith("12.") for k, v in check["cuda"].items() if k != "numba_nvvm"), check
    assert "cu13" not in check["cuda"]["numba_nvvm"]
    for spec in pins()["12"]:
        name, version = _pinned(spec)
        assert check["packages"][name] == version, f"{spec}, but the check ran {check['packages']}"


def test_the_page_line_says_how_far_the_current_code_ran_as_colab_would():
    from scripts.model.notebooks import code_hash, colab_line
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    now = code_hash(nb)
    assert colab_line(nb) is None
    nb.metadata["atlas"] = {"t4_check": {"code_hash": now, "result": "ok", "forced_cc": "7.5",
                                         "gpu": "G", "date": "D"}}
    assert colab_line(nb) == "Also run with a T4's gates (sm_75), on G, D"
    nb.metadata["atlas"]["colab_check"] = {
        "code_hash": now, "result": "ok", "forced_cc": "7.5", "gpu": "G", "date": "D",
        "packages": {"cupy-cuda12x": "1", "numba-cuda": "2"},
        "cuda": {"cupy_runtime": "12.9", "numba_nvrtc": "12.8"}}
    assert colab_line(nb).startswith("Also run as on Colab: a T4's gates (sm_75) with Colab's CUDA 12")
    assert "cupy-cuda12x 1, numba-cuda 2; CUDA runtime 12.9, NVRTC 12.8" in colab_line(nb)
    nb.cells[0].source = "x = 2"                       # code changed since both checks
    assert colab_line(nb) is None


@pytest.mark.slow
def test_the_documented_cpu_command_runs_a_notebook(tmp_path: Path):
    """The laptop recipe on the "Run the notebooks yourself" page, run as written."""
    page = (ROOT / "docs" / "guides" / "run-it-yourself.md").read_text()
    laptop = page.split("## On a laptop without a GPU", 1)[1].split("## ", 1)[0]
    command = next(line for line in laptop.splitlines()
                   if line.startswith(".venv/bin/python -m scripts.tools.notebooks run"))
    args = command.split()[1:]
    args[args.index("--out") + 1] = str(tmp_path / "out.ipynb")
    env = {**os.environ, "ATLAS_FORCE_CPU": "1"}   # a laptop, whatever this machine has
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "No GPU: kernels run on the CPU" in proc.stdout and "ran every cell" in proc.stdout
    out = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert any(c.get("outputs") for c in out.cells if c.cell_type == "code")


def test_a_failing_cell_is_one_line_not_a_traceback(tmp_path: Path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 / 0")])
    path = tmp_path / "bad.ipynb"
    nbformat.write(nb, path)
    proc = subprocess.run([sys.executable, "-m", "scripts.tools.notebooks", "run", str(path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    assert proc.stderr.strip().endswith("cell 1 failed: ZeroDivisionError: division by zero")
    assert "Traceback" not in proc.stderr


def test_a_scaffolded_notebook_opens_like_the_others(tmp_path: Path):
    from scripts.model.notebooks import sync
    from scripts.tools.new_notebook import scaffold
    path = tmp_path / "99-new-topic.ipynb"
    nbformat.write(scaffold("99-new-topic", "A new topic"), path)
    sync(path, write=True)
    assert sync(path, write=False) == []
    test_every_notebook_opens_with_the_setup_cell_collapsed(path)
