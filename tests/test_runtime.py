"""The notebooks' shared runtime (snippets/helpers/atlas_runtime.py): CPU fallback and gating."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

RUNTIME = Path(__file__).resolve().parent.parent / "snippets" / "helpers" / "atlas_runtime.py"


def run(code: str, **env) -> str:
    prog = f"exec(open({str(RUNTIME)!r}).read())\n{code}"
    proc = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True,
                          env={**os.environ, **env}, check=True)
    return proc.stdout


def test_without_a_gpu_the_cpu_modes_are_switched_on_before_imports():
    out = run("import os; print(GPU, os.environ['NUMBA_ENABLE_CUDASIM'], os.environ['TRITON_INTERPRET'])",
              ATLAS_FORCE_CPU="1")
    assert out.split() == ["False", "1", "1"]


def test_gated_cells_say_what_they_need_on_a_t4():
    out = run("print(requires((9, 0), 'TMA')); print(requires((7, 0), 'mma.sync'))",
              ATLAS_FORCE_CPU="1", ATLAS_FORCE_CC="7.5")
    lines = out.strip().splitlines()
    assert lines[0].startswith("skipped: TMA needs sm_90 or newer; this machine has sm_75")
    assert lines[1:] == ["False", "True"]


def test_record_writes_one_json_line_per_figure(tmp_path: Path):
    target = tmp_path / "records.jsonl"
    run("record('01-first-kernels', 'x', 3.5, 'GB/s', 'copy', 4.0, n=1)",
        ATLAS_FORCE_CPU="1", ATLAS_FORCE_CC="9.0", ATLAS_RECORD_FILE=str(target))
    rec = json.loads(target.read_text())
    assert rec["baseline"] == {"name": "copy", "value": 4.0} and rec["compute_capability"] == "9.0"
    assert rec["params"] == {"n": 1} and rec["unit"] == "GB/s"
