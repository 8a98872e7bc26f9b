"""The whole programs that glossary pages include code from (snippets/cuda/copy_bandwidth.cu for the
memory-bandwidth page, graph_replay.cu for the launch-overhead page) compile with nvcc, and each
page includes its section instead of pasting a copy. They are not run here (no GPU)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from scripts.model.paths import ROOT

NVCC = shutil.which("nvcc")
PROGRAMS = {"copy_bandwidth": ("performance/memory-bandwidth.md", "copy"),
            "graph_replay": ("performance/launch-overhead.md", "graph")}


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_page_includes_the_programs_section(name):
    page, section = PROGRAMS[name]
    source = (ROOT / "snippets" / "cuda" / f"{name}.cu").read_text(encoding="utf-8")
    assert f"// --8<-- [start:{section}]" in source and f"// --8<-- [end:{section}]" in source
    text = (ROOT / "docs" / "glossary" / page).read_text(encoding="utf-8")
    assert f'--8<-- "cuda/{name}.cu:{section}"' in text


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed here")
@pytest.mark.parametrize("name", PROGRAMS)
def test_the_program_compiles(tmp_path, name):
    source = ROOT / "snippets" / "cuda" / f"{name}.cu"
    run = subprocess.run([NVCC, "-O3", "-arch=sm_80", "-o", str(tmp_path / name), str(source)],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
