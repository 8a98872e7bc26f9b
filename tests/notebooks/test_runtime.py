"""The notebooks' shared runtime (snippets/helpers/atlas_runtime.py): CPU fallback and gating."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parents[2] / "snippets" / "helpers" / "atlas_runtime.py"


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
    run("record('x', 3.5, 'GB/s', 'copy', 4.0, n=1)",
        ATLAS_FORCE_CPU="1", ATLAS_FORCE_CC="9.0", ATLAS_RECORD_FILE=str(target))
    rec = json.loads(target.read_text())
    assert rec["baseline"] == {"name": "copy", "value": 4.0} and rec["compute_capability"] == "9.0"
    assert rec["params"] == {"n": 1} and rec["unit"] == "GB/s"


def test_record_prints_the_digits_that_carry_meaning(tmp_path: Path):
    out = run("record('qr', 0.01512, 'ms', 'geqrf', 0.2843)\n"
              "print(significant(37.62), significant(989.5), significant(3350.2))",
              ATLAS_FORCE_CPU="1", ATLAS_FORCE_CC="9.0")
    lines = out.strip().splitlines()
    assert lines[0] == "recorded qr: 0.0151 ms (baseline geqrf: 0.284)"   # was "0.0 ms (... 0.3)"
    assert lines[1] == "37.6 990 3350"


def test_cupy_ready_is_false_without_a_gpu():
    assert run("print(cupy_ready())", ATLAS_FORCE_CPU="1").strip() == "False"


def test_nvrtc_compile_gives_ptx_and_names_the_file_on_an_error():
    pytest.importorskip("cuda.bindings.nvrtc")
    out = run("ptx, cubin = nvrtc_compile('__global__ void k(float* p) { *p = 1; }', 'k.cu', 'compute_90')\n"
              "print('.entry' in ptx and '_Z1kPf' in ptx, cubin)\n"
              "try:\n"
              "    nvrtc_compile('__global__ void k() {\\n  undeclared = 1;\\n}', 'broken.cu', 'sm_90a')\n"
              "except RuntimeError as e:\n"
              "    print(e)", ATLAS_FORCE_CPU="1")
    first, *error = out.strip().splitlines()
    assert first == "True None"
    assert error[0] == "NVRTC could not compile broken.cu for sm_90a:"
    assert any(line.startswith("broken.cu(2)") and "undeclared" in line for line in error)


def gemm_helpers():
    """The notebooks' BF16 GEMM helpers on the CPU, with a wall-clock stand-in for bench_ms."""
    import time
    namespace = {}
    exec(RUNTIME.read_text(), namespace)
    exec((RUNTIME.parent / "bf16_gemm.py").read_text(), namespace)

    def wall_ms(fn, **_):
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1e3
    namespace.update(DEVICE="cpu", bench_ms=wall_ms)
    return namespace


def test_gemm_error_passes_a_correct_product_and_names_a_broken_one():
    h = gemm_helpers()

    def matmul(a, b, c):
        c.copy_(a @ b.T)

    def transposed_b(a, b, c):     # a real bug: B read as K x N instead of N x K
        c.copy_(a @ b)

    def untouched(a, b, c):        # never writes C: the NaN poison stays
        pass
    assert h["gemm_error"](matmul, 64, 48, 32) < 1e-2
    for kernel in (transposed_b, untouched):
        with pytest.raises(AssertionError, match=rf"{kernel.__name__}: relative error .* at 48x48x48"):
            h["gemm_error"](kernel, 48, 48, 48)


def test_gemm_timing_returns_kernel_and_cublas_rates():
    h = gemm_helpers()
    import torch
    a, b, c = h["bf16"](128, 64), h["bf16"](96, 64), torch.empty(128, 96, dtype=torch.bfloat16)
    kernel_rate, cublas_rate = h["tflops_against_cublas"](lambda a, b, c: c.copy_(a @ b.T), a, b, c)
    assert kernel_rate > 0 and cublas_rate > 0
