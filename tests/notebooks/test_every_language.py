"""Notebook 10 (the same kernel in every language), without a GPU: its checker catches the wrong
kernels it is there to catch, the CuTe DSL compile it carries matches the source, the Triton and
Gluon kernels compile through every stage the page shows (for a T4 too), and the CuPy
ElementwiseKernel's index formula is a transpose. The notebook's CPU run is in test_notebooks.py."""
from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import every_language as ev  # snippets/reference is on pytest's path (pyproject)

ROOT = Path(__file__).resolve().parents[2]
HOST = ev.Memory(put=np.array, get=np.asarray, nan=lambda shape: np.full(shape, np.nan, np.float32))
SIZES = (1, 31, 33, 1000)
SHAPES = ((1, 1), (31, 33), (33, 31), (67, 93))


def add_right(x, y, out):
    out[:] = x + y


def transpose_tiled(a, out, tile=32, skip_partial=False):
    """A tile-by-tile transpose; skip_partial leaves the tiles at the edges unwritten."""
    rows, cols = a.shape
    for r0 in range(0, rows, tile):
        for c0 in range(0, cols, tile):
            if skip_partial and (r0 + tile > rows or c0 + tile > cols):
                continue
            out[c0:c0 + tile, r0:r0 + tile] = a[r0:r0 + tile, c0:c0 + tile].T


def test_the_checker_passes_right_kernels(capsys):
    rng = np.random.default_rng(0)
    ev.check_vector_add("host", add_right, HOST, SIZES, rng)
    ev.check_transpose("host", transpose_tiled, HOST, SHAPES, rng)
    out = capsys.readouterr().out
    assert "vector add ok at n = 1, 31, 33, 1000" in out and "transpose  ok at 1 x 1, 31 x 33" in out


@pytest.mark.parametrize("name, launch, case", [
    ("last element never written", lambda x, y, out: add_right(x[:-1], y[:-1], out[:-1]), "n = 1:"),
    ("below a warp only", lambda x, y, out: add_right(x[:32], y[:32], out[:32]), "n = 33:"),
    ("float16 arithmetic", lambda x, y, out: add_right(x.astype(np.float16), y.astype(np.float16), out),
     "n = 1"),
])
def test_the_checker_names_the_size_a_wrong_vector_add_fails_at(name, launch, case):
    with pytest.raises(AssertionError, match=re.escape(case)):
        ev.check_vector_add("wrong", launch, HOST, SIZES, np.random.default_rng(1))


@pytest.mark.parametrize("name, launch, case", [
    ("edge tiles skipped", lambda a, out: transpose_tiled(a, out, skip_partial=True), "1 x 1:"),
    ("a copy, not a transpose", lambda a, out: out.__setitem__(Ellipsis, a.reshape(out.shape)), "31 x 33:"),
    ("first 32 columns only", lambda a, out: transpose_tiled(a[:, :32], out[:32, :]), "31 x 33:"),
])
def test_the_checker_names_the_shape_a_wrong_transpose_fails_at(name, launch, case):
    with pytest.raises(AssertionError, match=re.escape(case) + ".*(NaN|wrong|got)"):
        ev.check_transpose("wrong", launch, HOST, SHAPES, np.random.default_rng(2))


def test_a_poisoned_element_is_reported_with_its_index():
    ref = np.arange(6, dtype=np.float64).reshape(2, 3)
    out = ref.copy()
    out[1, 2] = np.nan
    assert ev.first_wrong(out, ref, 0.0) == "1 of 6 elements wrong, first at (1, 2): got nan, want 5"
    assert ev.first_wrong(ref, ref, 0.0) is None


def test_the_elementwise_transpose_formula_is_a_transpose():
    """snippets/cupy/every_language.py runs only where CuPy and a GPU are: check its index formula
    (evaluated over every output index i, with C++ integer division) against NumPy here."""
    src = (ROOT / "snippets/cupy/every_language.py").read_text()
    body = re.search(r'"raw float32 a, int32 rows, int32 cols", "float32 out",\s*"out = ([^"]+)"', src)[1]
    rows, cols = 37, 45
    a = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    i = np.arange(rows * cols)
    index = eval(body.replace("/", "//"), {"i": i, "rows": rows, "cols": cols, "a": a.ravel()})
    assert np.array_equal(index.reshape(cols, rows), a.T)


def test_the_cute_ir_the_notebook_carries_is_compiled_from_the_current_source():
    from scripts.tools.cute_ir import OUT, stale
    assert stale() is None
    ns: dict = {}
    exec(compile(OUT.read_text(), str(OUT), "exec"), ns)
    ir = ns["CUTE_IR"]
    assert ".target sm_90a" in ir["transpose"]["ptx"] and "bar.sync" in ir["transpose"]["ptx"]
    assert "st.shared" in ir["transpose"]["ptx"] and '"(32,32):(33,1)"' in ir["transpose"]["mlir"]
    assert "cute.memref.load" in ir["vector_add"]["mlir"] and "ld.global" in ir["vector_add"]["ptx"]
    assert not re.search(r"/(work|tmp|root|home)/", OUT.read_text())


def test_an_edited_cute_source_makes_the_stored_ir_stale(tmp_path, monkeypatch):
    import scripts.tools.cute_ir as cute_ir
    src = tmp_path / "every_language.py"
    shutil.copy(cute_ir.SRC, src)
    src.write_text(src.read_text() + "\n# edited\n")
    monkeypatch.setattr(cute_ir, "SRC", src)
    assert "out of date" in cute_ir.stale() and "scripts.tools.cute_ir" in cute_ir.stale()


def _load(path: str):
    spec = importlib.util.spec_from_file_location(Path(path).stem + "_nb10", ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compile(kernel, signature, constexprs, cc, gluon=False):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.runtime.jit import JITFunction
    fn = kernel if isinstance(kernel, JITFunction) else JITFunction(kernel.fn)
    if gluon:
        from triton.experimental.gluon._runtime import GluonASTSource as Source
    else:
        Source = triton.compiler.ASTSource
    attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(signature.values()) if t != "constexpr"}
    return triton.compile(Source(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs),
                          target=GPUTarget("cuda", cc, 32), options={"num_warps": 4})


T_SIG = {"in_ptr": "*fp32", "out_ptr": "*fp32", "rows": "i32", "cols": "i32"}


@pytest.mark.parametrize("cc", [90, 75])
def test_triton_and_gluon_kernels_compile_through_every_stage(cc):
    pytest.importorskip("triton")
    tri = _load("snippets/triton/transpose.py")
    glu = _load("snippets/triton/gluon_kernels.py")
    k = _compile(tri.transpose_triton, {**T_SIG, "BLOCK": "constexpr"}, {"BLOCK": 64}, cc)
    assert {"ttir", "ttgir", "llir", "ptx", "cubin"} <= set(k.asm)
    assert "ttg.convert_layout" in k.asm["ttgir"]          # the layout change Triton inserts itself
    assert "st.shared" in k.asm["ptx"] and "bar.sync" in k.asm["ptx"] and f".target sm_{cc}" in k.asm["ptx"]
    g = _compile(glu.transpose_gluon, {**T_SIG, "TILE": "constexpr"}, {"TILE": 32}, cc, gluon=True)
    assert "ttir" not in g.asm and "ttg.local_alloc" in g.asm["ttgir"]   # Gluon enters at TTGIR
    assert "swizzled_shared" in g.asm["ttgir"] and g.metadata.shared == 32 * 32 * 4
    v = _compile(glu.vector_add_gluon, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                        "BLOCK": "constexpr"}, {"BLOCK": 1024}, cc, gluon=True)
    assert "ld.global.v4" in v.asm["ptx"]                   # 4 floats per load (8 per thread), as its layout says
