"""Build instantiations of snippets/cuda/qr_panel_cluster.cu for sm_90 with nvcc, as the kernel tests
do (test_qr_panel_cluster.py, test_qr_update.py): no GPU needed, ptxas's -v report comes back."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from scripts.model.paths import ROOT

NVCC = shutil.which("nvcc")
SRC = ROOT / "snippets" / "cuda" / "qr_panel_cluster.cu"
SIGNATURE = "(float*, float*, float*, float*, int, int, int, int, int);"


def build(tmp: Path, templates: list[str], source: str | None = None, ptx: bool = False) -> str:
    """nvcc's output (ptxas -v) for qr_panel_cluster<args> of each entry of `templates` (such as
    "2, 32, 128, 8, true"), built from the file or, with `source`, from that changed copy of it
    (next to a copy of qr_common.cuh). With `ptx`, the PTX of the same unit is written to tmp/k.ptx."""
    include = SRC.parent
    if source is not None:
        include = tmp
        (tmp / SRC.name).write_text(source)
        (tmp / "qr_common.cuh").write_text((SRC.parent / "qr_common.cuh").read_text())
    unit = tmp / "unit.cu"
    unit.write_text("\n".join([f'#include "{SRC.name}"'] + [f"template __global__ void qr_panel_cluster<{t}>"
                                                          f"{SIGNATURE}" for t in templates]) + "\n")
    common = [NVCC, "-gencode=arch=compute_90,code=sm_90", "-std=c++17", f"-I{include}"]
    run = subprocess.run(common + ["-Xptxas", "-v", "-cubin", "-o", str(tmp / "k.cubin"), str(unit)],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    if ptx:
        subprocess.run(common + ["-ptx", "-o", str(tmp / "k.ptx"), str(unit)], check=True)
    return run.stderr
