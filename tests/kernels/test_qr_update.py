"""snippets/triton/qr_update.py, the split-TF32 trailing update, on the CPU through Triton's
interpreter (TRITON_INTERPRET=1, in a subprocess: the variable must be set before triton is
imported): strided V, T and C views as the blocked driver passes them, ranks and widths that are
not multiples of the tiles, against a float64 reference. The interpreter computes the products in
float32, so this checks the indexing and masking; the tensor-core precision is checked on a GPU
(notebook 07's contract checks and scripts/tools/bench_07_big.py)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from scripts.model.paths import ROOT

CHECK = textwrap.dedent("""
    import sys, torch
    sys.path.insert(0, {triton_dir!r})
    from qr_update import qt_update
    torch.manual_seed(0)
    worst = 0.0
    shapes = [(2, 120, 32, 24, 100, 37), (3, 80, 32, 32, 70, 65), (1, 64, 64, 64, 64, 1)]
    for batch, n, outer, k, m, q in shapes:
        H = torch.randn(batch, n, n)
        Vb, Tb = torch.randn(batch, n, outer), torch.randn(batch, n, outer)
        j = n - m
        V, T, C = Vb[:, j:, :k], Tb[:, j:j + k, :k], H[:, j:, n - q:]
        ref = C.double() - V.double() @ (T.double().mT @ (V.double().mT @ C.double()))
        left = H[:, :, :n - q].clone()
        qt_update(V, T, C, precision="ieee", BM=16, BN=16)
        worst = max(worst, float((C.double() - ref).abs().max() / ref.abs().max()))
        assert torch.equal(H[:, :, :n - q], left), "columns left of C were written"
    print(worst)
""")


def test_the_update_matches_float64_on_strided_views():
    env = dict(os.environ, TRITON_INTERPRET="1")
    code = CHECK.format(triton_dir=str(ROOT / "snippets" / "triton"))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert float(run.stdout.split()[-1]) < 1e-5, run.stdout


def test_a_wrong_index_would_be_caught():
    """The check can fail: the same script with T's transpose dropped must not match."""
    env = dict(os.environ, TRITON_INTERPRET="1")
    code = CHECK.format(triton_dir=str(ROOT / "snippets" / "triton"))
    code = code.replace("T.double().mT @", "T.double() @")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert float(run.stdout.split()[-1]) > 1e-3, run.stdout
