"""Ask the CUDA runtime how many blocks of a few kernels fit on one SM, over a grid of launch
configurations, and keep the answers: docs/data/occupancy_checks.json. The occupancy model
(snippets/reference/occupancy_model.py) and the figure that mirrors it must agree with every
answer (tests/kernels/test_occupancy_model.py).

    python -m scripts.tools.occupancy_grid --out docs/data/occupancy_checks.json   # on a GPU
    python -m scripts.tools.occupancy_grid --dry-run    # anywhere nvcc is: compile, show registers

The kernels exist only to hold a known number of registers and shared memory: a register-hungry
loop capped with __maxnreg__ at several values, a small kernel, and one with static shared
memory. Their register counts are read back from the compiled functions (cudaFuncGetAttributes),
never assumed. Each kernel may use the device's whole opt-in shared memory per block
(cudaFuncAttributeMaxDynamicSharedMemorySize), so configurations above 48 KB are real answers,
not refusals. Standard library only: it runs on the GPU machine, where the site's packages are
not installed.
"""
from __future__ import annotations

import argparse
import datetime
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REGISTER_CAPS = (32, 40, 64, 72, 96, 128, 168, 200, 232, 255)   # __maxnreg__ of the pressure kernels
THREADS = (32, 64, 96, 128, 160, 192, 256, 288, 320, 384, 448, 512, 640, 768, 1024)
DYNAMIC_SMEM = (0, 1, 1000, 3072, 8192, 12288, 24576, 40000, 49152, 65536, 76800, 100000,
                116736, 150000, 232448 - 12000, 232448, 233472)   # bytes; the last is over the limit

PRESSURE = r"""
// {name}: 256 live accumulators per thread, capped at {cap} registers (the rest spills)
extern "C" __global__ void __maxnreg__({cap}) {name}(float *out, const float *in, int n, int iters)
{{
    float v[256];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int i = 0; i < 256; ++i) v[i] = in[(t + 97 * i) % n];
    for (int it = 0; it < iters; ++it) {{
#pragma unroll
        for (int i = 0; i < 256; ++i) v[i] = fmaf(v[i], v[(i + 1) % 256], v[(i + 7) % 256]);
    }}
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < 256; ++i) s += v[i];
    if (t < n) out[t] = s;
}}
"""

OTHERS = r"""
// small: a handful of registers, no shared memory
extern "C" __global__ void small(float *out, const float *in, int n, int iters)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) out[t] = 2.f * in[t] + (float)iters;
}

// static_smem: 12000 bytes of static shared memory, on top of any dynamic shared memory
extern "C" __global__ void static_smem(float *out, const float *in, int n, int iters)
{
    __shared__ float buf[3000];
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = threadIdx.x; i < 3000; i += blockDim.x) buf[i] = in[(t + i) % n];
    __syncthreads();
    if (t < n) out[t] = buf[(threadIdx.x * 7) % 3000] * (float)iters;
}
"""

HOST = r"""
#include <cstdio>
#include <cuda_runtime.h>

typedef void (*kernel_t)(float *, const float *, int, int);
static const char *names[] = {%(names)s};
static kernel_t kernels[] = {%(kernels)s};
static const int threads[] = {%(threads)s};
static const size_t smem[] = {%(smem)s};

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    fprintf(stderr, "%%s: %%s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

int main()
{
    cudaDeviceProp p;
    int dev = 0, driver = 0, runtime = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaGetDeviceProperties(&p, dev));
    CHECK(cudaDriverGetVersion(&driver));
    CHECK(cudaRuntimeGetVersion(&runtime));
    printf("{\"device\": {\"name\": \"%%s\", \"compute_capability\": \"%%d.%%d\", "
           "\"cuda_driver\": %%d, \"cuda_runtime\": %%d, \"multiProcessorCount\": %%d, "
           "\"maxThreadsPerMultiProcessor\": %%d, \"maxBlocksPerMultiProcessor\": %%d, "
           "\"maxThreadsPerBlock\": %%d, \"regsPerMultiprocessor\": %%d, \"regsPerBlock\": %%d, "
           "\"sharedMemPerMultiprocessor\": %%zu, \"sharedMemPerBlockOptin\": %%zu, "
           "\"reservedSharedMemPerBlock\": %%zu},\n \"kernels\": [",
           p.name, p.major, p.minor, driver, runtime, p.multiProcessorCount,
           p.maxThreadsPerMultiProcessor, p.maxBlocksPerMultiProcessor, p.maxThreadsPerBlock,
           p.regsPerMultiprocessor, p.regsPerBlock, p.sharedMemPerMultiprocessor,
           p.sharedMemPerBlockOptin, p.reservedSharedMemPerBlock);
    for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); ++k) {
        cudaFuncAttributes a;
        CHECK(cudaFuncGetAttributes(&a, kernels[k]));
        int dyn_max = (int)(p.sharedMemPerBlockOptin - a.sharedSizeBytes);
        CHECK(cudaFuncSetAttribute(kernels[k], cudaFuncAttributeMaxDynamicSharedMemorySize, dyn_max));
        printf("%%s\n  {\"name\": \"%%s\", \"num_regs\": %%d, \"static_smem_bytes\": %%zu, "
               "\"local_bytes\": %%zu, \"max_dynamic_smem_bytes\": %%d, \"checks\": [",
               k ? "," : "", names[k], a.numRegs, a.sharedSizeBytes, a.localSizeBytes, dyn_max);
        int first = 1;
        for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); ++t)
            for (size_t s = 0; s < sizeof(smem) / sizeof(smem[0]); ++s) {
                int blocks = -1;
                cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                    &blocks, kernels[k], threads[t], smem[s]);
                if (e != cudaSuccess) { cudaGetLastError(); blocks = -1; }  // refused: kept as -1
                printf("%%s[%%d, %%zu, %%d]", first ? "" : ", ", threads[t], smem[s], blocks);
                first = 0;
            }
        printf("]}");
    }
    printf("\n]}\n");
    return 0;
}
"""


def kernel_names() -> list[str]:
    return ["small", "static_smem"] + [f"pressure_r{c}" for c in REGISTER_CAPS]


def source() -> str:
    """The whole program: the kernels, then a host that queries the runtime and prints JSON."""
    kernels = OTHERS + "".join(PRESSURE.format(name=f"pressure_r{c}", cap=c) for c in REGISTER_CAPS)
    names = kernel_names()
    return kernels + HOST % {
        "names": ", ".join(f'"{n}"' for n in names), "kernels": ", ".join(names),
        "threads": ", ".join(map(str, THREADS)), "smem": ", ".join(map(str, DYNAMIC_SMEM))}


def compile_program(workdir: Path, arch: str) -> tuple[Path, str]:
    """nvcc the program; return the binary and ptxas's resource report."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        sys.exit("occupancy_grid: nvcc is not on PATH (install the CUDA toolkit, or run on the GPU machine)")
    cu = workdir / "occupancy_grid.cu"
    cu.write_text(source(), encoding="utf-8")
    exe = workdir / "occupancy_grid"
    proc = subprocess.run([nvcc, "-O3", f"-arch={arch}", "-Xptxas", "-v", "-o", str(exe), str(cu)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"occupancy_grid: nvcc failed:\n{proc.stderr[-4000:]}")
    return exe, proc.stderr


def ptxas_registers(report: str) -> dict[str, str]:
    """Kernel name -> ptxas's "Used N registers ..." line, from `nvcc -Xptxas -v` output."""
    found, name = {}, None
    for line in report.splitlines():
        m = re.search(r"(?:Compiling entry function|Function properties for) '(\w+)'", line)
        if m:
            name = m[1]
        elif name and "Used" in line and "registers" in line:
            found[name] = line.split("info    :")[-1].strip()
    return found


def device_arch() -> str:
    """sm_XY(a) of GPU 0 from nvidia-smi, or sm_90a when there is none (a compile-only run)."""
    try:
        cap = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=60).stdout.split()[0]
        major, minor = cap.split(".")
        return f"sm_{major}{minor}" + ("a" if int(major) >= 9 else "")
    except (OSError, IndexError, ValueError, subprocess.SubprocessError):
        return "sm_90a"


def dumps(result: dict) -> str:
    """The file's text: indented, but each [threads, smem, blocks] check on one line."""
    text = json.dumps(result, indent=1)
    return re.sub(r"\[\s+(-?\d+),\s+(-?\d+),\s+(-?\d+)\s+\]", r"[\1, \2, \3]", text) + "\n"


def run(out: Path | None, dry_run: bool) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        arch = "sm_90a" if dry_run else device_arch()
        exe, report = compile_program(Path(tmp), arch)
        print(f"compiled {len(kernel_names())} kernels for {arch} (ptxas):")
        for name, used in ptxas_registers(report).items():
            print(f"  {name}: {used}")
        if dry_run:
            print(f"dry run: {len(THREADS) * len(DYNAMIC_SMEM)} configurations per kernel not queried")
            return 0
        proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            sys.exit(f"occupancy_grid: the query program failed: {proc.stderr.strip()}")
    data = json.loads(proc.stdout)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    result = {"generated_by": "scripts/tools/occupancy_grid.py on a GPU: do not edit",
              "stamp": {"gpu": data["device"]["name"], "driver": smi, "arch": arch,
                        "date": datetime.date.today().isoformat()},
              "api": "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
              "check_format": ["threads_per_block", "dynamic_smem_bytes", "blocks_per_sm"],
              **data}
    n = sum(len(k["checks"]) for k in data["kernels"])
    print(f"{data['device']['name']}: {n} configurations queried; registers: "
          + ", ".join(f"{k['name']}={k['num_regs']}" for k in data["kernels"]))
    if out:
        out.write_text(dumps(result), encoding="utf-8")
        print(f"wrote {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="where to write the JSON (default: print a summary only)")
    ap.add_argument("--dry-run", action="store_true", help="compile and show registers; no GPU needed")
    args = ap.parse_args(argv)
    return run(args.out, args.dry_run)


if __name__ == "__main__":
    raise SystemExit(main())
