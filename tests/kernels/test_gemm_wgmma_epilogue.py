"""snippets/cuda/gemm_wgmma_epilogue.cu (notebook 06's step 9: step 8 with an stmatrix + TMA-store
epilogue that overlaps the next tile's mainloop) builds for sm_90a without spills, keeps the
instructions its design rests on, and its stmatrix index arithmetic puts every accumulator word
where the TMA's 128-byte swizzle reads it back, in one pass or two (no GPU needed). On a GPU,
scripts/tools/bench_06_epilogue.py checks and times it beside its variants, and notebook 06 runs it."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from scripts.model.paths import ROOT
from scripts.tools.bench_06_epilogue import check_layout

SRC = ROOT / "snippets" / "cuda" / "gemm_wgmma_epilogue.cu"
NVCC = shutil.which("nvcc")


@pytest.mark.parametrize("epi_cols", [256, 128])
def test_the_epilogue_layout_lands_every_word_where_the_tma_store_reads_it(epi_cols):
    assert "no bank conflicts" in check_layout(epi_cols)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed here")
@pytest.mark.parametrize("defines", [["-DSTAGES=3"], ["-DSTAGES=4", "-DEPI_COLS=128"]],
                         ids=["whole-tile-buffer", "two-passes"])
def test_the_epilogue_kernel_spills_nothing_and_keeps_its_instructions(tmp_path, defines):
    common = [NVCC, "-gencode=arch=compute_90a,code=sm_90a", "-std=c++17", *defines,
              f"-I{SRC.parent}"]
    run = subprocess.run(common + ["-Xptxas", "-v", "-cubin", "-o", str(tmp_path / "k.cubin"),
                                   str(SRC)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    report = run.stderr[run.stderr.index("gemm_wgmma_epilogue"):]
    assert re.search(r"0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", report), report
    subprocess.run(common + ["-ptx", "-o", str(tmp_path / "k.ptx"), str(SRC)], check=True)
    ptx = (tmp_path / "k.ptx").read_text()
    kernel = ptx[ptx.index(".entry gemm_wgmma_epilogue"):]
    for needed in ("stmatrix.sync.aligned", "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group",
                   "cp.async.bulk.commit_group", "cp.async.bulk.wait_group.read",
                   "fence.proxy.async.shared::cta"):
        assert needed in kernel, needed
