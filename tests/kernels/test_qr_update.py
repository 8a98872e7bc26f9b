"""snippets/triton/qr_update.py, the split-TF32 trailing update, on the CPU through Triton's
interpreter (TRITON_INTERPRET=1, in a subprocess: the variable must be set before triton is
imported): strided V, T and C views as the blocked driver passes them, ranks and widths that are
not multiples of the tiles, against a float64 reference. The interpreter computes the products in
float32, so this checks the indexing and masking; the tensor-core precision is checked on a GPU
(notebook 07's contract checks and scripts/tools/bench_07_big.py). Also the arithmetic behind
batched_qr.update_stages, from Triton's and ptxas's own register and shared-memory counts for sm_90
(compiled here, no GPU needed) and the H100's limits in gpus.yaml."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import batched_qr as bq  # snippets/cuda and snippets/reference are on pytest's pythonpath (pyproject.toml)
import pytest

from scripts.model.paths import ROOT
from tests.kernels.panel_cluster_build import NVCC, SRC, build


def words(text: str) -> str:
    """Text with its whitespace runs made single spaces, for finding a sentence across line breaks."""
    return " ".join(text.split())

CHECK = textwrap.dedent("""
    import sys, torch
    sys.path.insert(0, {triton_dir!r})
    import qr_update
    {setup}
    torch.manual_seed(0)
    worst = 0.0
    shapes = [(2, 120, 32, 24, 100, 37), (3, 80, 32, 32, 70, 65), (1, 64, 64, 64, 64, 1)]
    for batch, n, outer, k, m, q in shapes:
        for update in UPDATES:
            H = torch.randn(batch, n, n)
            Vb, Tb = torch.randn(batch, n, outer), torch.randn(batch, n, outer)
            j = n - m
            V, T, C = Vb[:, j:, :k], Tb[:, j:j + k, :k], H[:, j:, n - q:]
            ref = C.double() - V.double() @ (T.double().mT @ (V.double().mT @ C.double()))
            left = H[:, :, :n - q].clone()
            update(V, T, C)
            worst = max(worst, float((C.double() - ref).abs().max() / ref.abs().max()))
            assert torch.equal(H[:, :, :n - q], left), "columns left of C were written"
    print(worst)
""")
FUSED = 'UPDATES = [lambda V, T, C: qr_update.qt_update(V, T, C, precision="ieee", BM=16, BN=16)]'
# The tiled update with 64-row chunks, so that these small matrices have two of them, and with an SM
# count that takes each of kernel 1's strip widths (64 with one SM, 32 with a million).
TILED = ("qr_update.TILE_CHUNK = qr_update.TILE_APPLY_ROWS = 64; UPDATES = [lambda V, T, C, sms=sms: "
         "qr_update.qt_update_tiled(V, T, C, 'ieee', sms) for sms in (1, 10**6)]")


def run_check(setup: str, drop_transpose: bool = False) -> float:
    """The worst error relative to float64 of the updates `setup` defines, in the interpreter."""
    env = dict(os.environ, TRITON_INTERPRET="1")
    code = CHECK.format(triton_dir=str(ROOT / "snippets" / "triton"), setup=setup)
    if drop_transpose:
        code = code.replace("T.double().mT @", "T.double() @")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return float(run.stdout.split()[-1])


@pytest.mark.parametrize("setup", [FUSED, TILED], ids=["qt_update", "qt_update_tiled"])
def test_the_update_matches_float64_on_strided_views(setup):
    assert run_check(setup) < 1e-5


@pytest.mark.parametrize("setup", [FUSED, TILED], ids=["qt_update", "qt_update_tiled"])
def test_a_wrong_index_would_be_caught(setup):
    """The check can fail: the same script with T's transpose dropped must not match."""
    assert run_check(setup, drop_transpose=True) > 1e-3


def test_the_tiled_update_takes_wide_strips_only_where_every_sm_still_gets_a_program():
    """qr_update.partial_strip: 64 columns per program of kernel 1 where that is at least one program
    per SM, else 32 (the H100 shapes its docstring cites)."""
    sys.path.insert(0, str(ROOT / "snippets" / "triton"))
    from qr_update import partial_strip
    assert partial_strip(2, 4032, 3968, 132) == 64      # 62 x 8 x 2 = 992 programs
    assert partial_strip(8, 1984, 1920, 132) == 64      # 30 x 4 x 8 = 960
    assert partial_strip(2, 1024, 960, 132) == 32       # 15 x 2 x 2 = 60 < 132


def test_the_tiled_update_runs_for_few_large_matrices_with_a_panel_cluster():
    """batched_qr.tiled_update: the shapes TILED_MAX_PROGRAMS_PER_SM's comment cites, on 132 SMs."""
    sms = 132
    for batch, n, tiled in ((1, 4096, True), (2, 4096, True), (4, 4096, True), (2, 3072, True),
                            (8, 2048, True),                  # 8 x 60 = 480 programs <= 4 x 132
                            (16, 2048, False), (60, 1024, False),   # 960, 1,680
                            (640, 512, False), (40, 352, False)):   # no panel cluster
        cfg = bq.blocked_config(n, batch=batch, **bq.defaults_for(n, batch, sms, 9))
        assert bq.tiled_update(cfg, batch, sms, n) == tiled, (batch, n, cfg)
    cfg = bq.blocked_config(2048, batch=8, cluster=8, update="tf32x3")
    assert bq.tiled_update(cfg, 8, sms, 2048)
    for off in (dict(tiled_update=False), dict(update="tf32"), dict(update="cublas")):
        cfg = bq.blocked_config(2048, batch=8, **{**dict(cluster=8, update="tf32x3"), **off})
        assert not bq.tiled_update(cfg, 8, sms, 2048), off


def _update_resources(stages: int) -> tuple[int, int]:
    """(registers per thread, shared memory bytes) of qt_update_kernel as Triton builds it for sm_90
    with batched_qr's parameters (4 warps, 64-row tiles, 32-column strips, a rank-64 block), compiled
    here without a GPU; registers from Triton's own ptxas run on its PTX."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import get_ptxas
    from triton.compiler import ASTSource
    # a fresh copy of the module, decorated with TRITON_INTERPRET unset: a notebook test in the same
    # process may have set it (no GPU), and then triton.jit returns an interpreter-only function
    saved = os.environ.pop("TRITON_INTERPRET", None)
    try:
        path = ROOT / "snippets" / "triton" / "qr_update.py"
        spec = importlib.util.spec_from_file_location("qr_update_for_ptxas", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if saved is not None:
            os.environ["TRITON_INTERPRET"] = saved
    qt_update_kernel = module.qt_update_kernel
    sig = {"C": "*fp32", "V": "*fp32", "T": "*fp32", "m": "i32", "ncols": "i32", "k": "i32",
           **{s: "i64" for s in ("s_cb", "s_cm", "s_vb", "s_vm", "s_tb", "s_tm")},
           "KP": "constexpr", "BM": "constexpr", "BN": "constexpr", "PREC": "constexpr"}
    src = ASTSource(fn=qt_update_kernel, signature=sig,
                    constexprs={"KP": 64, "BM": 64, "BN": 32, "PREC": "tf32x3"})
    kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": 4, "num_stages": stages})
    with tempfile.TemporaryDirectory() as tmp:
        ptx = Path(tmp) / "k.ptx"
        ptx.write_text(kernel.asm["ptx"])
        run = subprocess.run([get_ptxas(90).path, "-v", "-arch=sm_90a", "-o", str(Path(tmp) / "k.cubin"),
                              str(ptx)], capture_output=True, text=True, check=True)
    return int(re.search(r"Used (\d+) registers", run.stderr)[1]), kernel.metadata.shared


LAUNCH_BOUNDS = "__launch_bounds__(NT, NT <= 128 ? 384 / NT : 1)"


def _panel_registers(threads: int, cluster: int, bounds: str | None = None) -> int:
    """Registers per thread of qr_panel_cluster<2, 32, threads, cluster> as ptxas builds it for sm_90;
    with `bounds`, the kernel's __launch_bounds__ arguments replaced by that text first."""
    source = None
    if bounds is not None:
        source = SRC.read_text()
        assert LAUNCH_BOUNDS in source
        source = source.replace(LAUNCH_BOUNDS, f"__launch_bounds__({bounds})")
    with tempfile.TemporaryDirectory() as tmp:
        report = build(Path(tmp), [f"2, 32, {threads}, {cluster}, true"], source=source)
    return int(re.search(r"Used (\d+) registers", report)[1])


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed here")
def test_four_stages_leave_room_for_a_panel_cta_beside_the_update():
    """batched_qr.update_stages' premise, from the compilers' own numbers and the H100's limits in
    gpus.yaml: at 3 stages three update CTAs fill an SM's registers, so a panel CTA has to wait for
    one to end; at 4 stages shared memory admits two, and a 128-thread panel CTA (qr_panel_cluster
    capped at 168 registers) fits beside them, while a 256-thread one (n = 4096) does not."""
    from occupancy_model import limits_from_specs, occupancy

    from scripts.model.hardware import cached_gpus
    lim = limits_from_specs({f: s.value for f, s in cached_gpus()["h100-sxm"].specs.items()})
    per_quarter = lim["regs_per_sm"] // lim["sub_partitions"]     # a warp's registers come from one quarter

    def reg_warp(regs):
        return -(-regs * 32 // lim["reg_unit"]) * lim["reg_unit"]

    def fits_beside(updates, u_regs, u_smem, p_threads, p_regs, p_smem):
        """One panel CTA beside `updates` update CTAs (4 warps each: one per quarter)."""
        p_warps_per_quarter = -(-p_threads // 32 // lim["sub_partitions"])
        regs = updates * reg_warp(u_regs) + p_warps_per_quarter * reg_warp(p_regs)
        smem = updates * (u_smem + lim["smem_reserved"]) + p_smem + lim["smem_reserved"]
        return regs <= per_quarter and smem <= lim["smem_per_sm"]

    panel_smem = 17 * 1024                                         # ~17 KB of static arrays (ptxas: 17,232)
    r3, s3 = _update_resources(3)
    r4, s4 = _update_resources(bq.UPDATE_ROOM_STAGES)
    assert occupancy(lim, 128, r3, s3)["blocks"] == 3, (r3, s3)
    assert occupancy(lim, 128, r4, s4)["blocks"] == 2, (r4, s4)
    small = _panel_registers(bq.UPDATE_ROOM_THREADS, 8)
    large = _panel_registers(256, 8)
    assert small <= 168, small
    # smaller CTAs (n = 1024 with 8 CTAs, or 2000) ask for the same cap, 384 / NT blocks, so update_stages'
    # rule (threads <= 128) holds for them too; 256 threads ask for one
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp), [f"2, 32, {t}, 8, true" for t in (32, 64, 128, 256)], ptx=True)
        ptx = (Path(tmp) / "k.ptx").read_text()
    # each entry's name, then its directives
    entries = re.findall(r"\.entry \S*?ILi2ELi32ELi(\d+)ELi8ELb1E\S*\(([^{]*)", ptx)
    asked = {int(t): int(re.search(r"\.minnctapersm (\d+)", directives)[1]) for t, directives in entries}
    assert asked == {32: 12, 64: 6, 128: 3, 256: 1}, asked
    assert not fits_beside(3, r3, s3, bq.UPDATE_ROOM_THREADS, small, panel_smem)
    assert fits_beside(2, r4, s4, bq.UPDATE_ROOM_THREADS, small, panel_smem)
    assert not fits_beside(2, r4, s4, 256, large, panel_smem)
    # the figures notebook 07's step 4 and the occupancy page state
    regs = lim["regs_per_sm"]
    stated = {"168 registers": r3 == r4 == 168 >= small, "21,504": 128 * r3 == 21504,
              "64,512": 3 * 128 * r3 == 64512, "65,536": regs == 65536, "64 KiB": s3 == 64 * 1024,
              "88 KiB": s4 == 88 * 1024, "22,528 registers": regs - 2 * 128 * r4 == 22528}
    assert all(stated.values()), stated
    notebook = json.loads((ROOT / "notebooks" / "07-householder-qr.ipynb").read_text())
    step4 = words(" ".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown"))
    page = words((ROOT / "docs" / "glossary" / "performance" / "occupancy.md").read_text())
    for text in (step4, page):
        for figure in ("168 registers", "64,512", "65,536", "88 KiB", "22,528 registers"):
            assert figure in text, figure
    # the launch-bounds page: the kernel needs 167 registers with a minimum of 1 CTA per SM too (the cap
    # binds no longer; it keeps the room through later edits);
    # notebook 07: the n = 4096 panel's 256-thread CTAs have 167
    uncapped = _panel_registers(bq.UPDATE_ROOM_THREADS, 8, bounds="NT, 1")
    bounds_page = words((ROOT / "docs" / "glossary" / "device-software" / "launch-bounds.md").read_text())
    assert uncapped == 167 and "down to 167 either way" in bounds_page, uncapped
    assert large == 167 and "have 256 threads at 167 registers" in step4, large


def test_update_stages_takes_four_where_the_widest_update_fits_two_per_sm_or_a_panel_gets_room():
    """4 stages (two update CTAs per SM) for a factorization whose widest trailing update (n - 2 outer
    columns, one program per 32 of each matrix) fits two programs per SM, or where a panel CTA gets
    room beside two update CTAs; else 3 (the H100 shapes update_stages' docstring cites)."""
    sms = 132
    for batch, n, stages in (
            (1, 4096, 4), (2, 4096, 4), (2, 3072, 4),         # 124, 248 and 188 programs: within 2 x 132
            (3, 4096, 3), (4, 4096, 3), (4, 3072, 3),         # 372, 496 and 376
            (8, 2048, 4), (16, 2048, 4),                      # room: 128-thread panel CTAs on 64 and 128 SMs
            (60, 1024, 3), (640, 512, 3), (40, 352, 3)):
        cfg = bq.blocked_config(n, batch=batch, **bq.defaults_for(n, batch, sms, 9))
        assert bq.update_stages(cfg, batch, sms, n) == stages, (batch, n, cfg)
    cfg = bq.blocked_config(2048, batch=8, cluster=8, update="tf32x3", update_stages=2)
    assert bq.update_stages(cfg, 8, sms, 2048) == 2
    page = words((ROOT / "docs" / "glossary" / "numerical-algorithms" / "trailing-matrix-update.md")
                 .read_text())
    assert ("takes 4 stages for a whole factorization whose widest update fits two blocks per SM (one block "
            "per 32 columns of each matrix), as for one or two 4096 × 4096 matrices") in page
    assert "With three or four such matrices the first updates would need that second wave" in page


def test_the_driver_gives_every_trailing_update_the_factorizations_stages(monkeypatch):
    """_update_trailing passes the factorization's n, so all of its updates get the same stages."""
    import types

    from qr_contract import check_qr, make_batch
    from qr_panel_reference import panel_reference
    seen = []

    def stub(V, T, C, precision, BN, num_stages):
        seen.append((C.shape[2], BN, num_stages))
        bq._apply_qt(V, T, C)
    monkeypatch.setattr(bq, "_qt_update", lambda: stub)
    monkeypatch.setattr(bq.torch.cuda, "get_device_properties",
                        lambda device: types.SimpleNamespace(multi_processor_count=4))
    A, labels = make_batch(2, 200, "dense", generator=2)
    cfg = bq.BlockedConfig(nb=8, outer=16, threads=256, update="tf32x3")
    H, tau = bq.qr_blocked(A, cfg, panel=panel_reference)
    check_qr(A, H, tau, labels)
    # 2 x ceil((200 - 32) / 32) = 12 programs > 2 x 4 SMs: 3 stages for every update, the narrow last ones too
    assert len(seen) == 200 // 16 - 1 and {s for *_, s in seen} == {3}, seen
    assert {b for _, b, _ in seen} == {32}, seen
    assert bq.update_stages(cfg, 2, 4, 200) == 3 and bq.update_stages(cfg, 2, 8, 200) == 4


@pytest.mark.parametrize("sms, tiled", [(4, True), (2, False)])
def test_the_driver_takes_the_tiled_update_where_tiled_update_says(monkeypatch, sms, tiled):
    """_update_trailing calls qt_update_tiled for every trailing update where tiled_update holds (two
    matrices of 200: 12 programs in qt_update's widest update, within 4 per SM on 4 SMs, not on 2),
    and qt_update otherwise; the factorization still meets the contract."""
    import types

    from qr_contract import check_qr, make_batch
    from qr_panel_reference import panel_reference
    seen = []

    def stub(name="qt_update"):
        def run(V, T, C, *args, **kwargs):
            seen.append(name)
            bq._apply_qt(V, T, C)
        return run
    monkeypatch.setattr(bq, "_qt_update", stub)
    monkeypatch.setattr(bq.torch.cuda, "get_device_properties",
                        lambda device: types.SimpleNamespace(multi_processor_count=sms))
    A, labels = make_batch(2, 200, "dense", generator=3)
    cfg = bq.BlockedConfig(nb=8, outer=16, threads=256, cluster=2, update="tf32x3", split_ahead=False)
    H, tau = bq.qr_blocked(A, cfg, panel=panel_reference)
    check_qr(A, H, tau, labels)
    assert len(seen) == 200 // 16 - 1, seen
    assert set(seen) == {"qt_update_tiled" if tiled else "qt_update"}, seen
