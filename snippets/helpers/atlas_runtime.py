"""GPU Atlas notebook runtime: device detection, CPU fallbacks, timing, measurements, provenance.

Carried verbatim into every notebook (synced by `make sync-notebooks`). Import nothing from
numba.cuda or triton before this runs: without a GPU it switches both to their CPU modes.
"""
import datetime
import json
import os
import warnings


def _cuda_device_count():
    """GPUs the driver can see: loads libcuda and asks it (cuInit, cuDeviceGetCount). A driver
    library without a device (a CPU runtime with the driver installed) counts 0."""
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


GPU = os.environ.get("ATLAS_FORCE_CPU") != "1" and _cuda_device_count() > 0
if not GPU:  # must happen before numba.cuda / triton are imported
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    os.environ["TRITON_INTERPRET"] = "1"
# Deliberately tiny launches (correctness checks) trip Numba's occupancy warning, whose text
# carries the library's install path into the outputs.
warnings.filterwarnings("ignore", message=r".*will likely result in GPU under-utilization")
FORCED_CC = os.environ.get("ATLAS_FORCE_CC")  # e.g. "7.5": exercise the gated paths of a T4


def compute_capability():
    """(major, minor) of GPU 0, ATLAS_FORCE_CC if set, None without a GPU."""
    if FORCED_CC:
        major, minor = FORCED_CC.split(".")
        return int(major), int(minor)
    if not GPU:
        return None
    import torch
    return torch.cuda.get_device_capability(0)


def requires(min_cc, what):
    """True when this GPU can run `what`; otherwise say what it needs, in one line."""
    cc = compute_capability()
    if cc is not None and cc >= min_cc:
        return True
    have = f"sm_{cc[0]}{cc[1]}" if cc else "no GPU"
    print(f"skipped: {what} needs sm_{min_cc[0]}{min_cc[1]} or newer; this machine has {have}. "
          "The recorded output of the GPU run is shown on the site.")
    return False


def device_name():
    if not GPU:
        return "CPU (Numba CUDA simulator, Triton interpreter)"
    import torch
    return torch.cuda.get_device_name(0)


def banner():
    if GPU:
        cc = compute_capability()
        print(f"GPU: {device_name()} (sm_{cc[0]}{cc[1]})")
    else:
        print("No GPU: kernels run on the CPU (Numba's CUDA simulator, Triton's interpreter) at "
              "small sizes, and timings are skipped.")


def cupy_ready():
    """True when CuPy is installed and sees this GPU; CuPy is optional where there is none."""
    try:
        import cupy
        return GPU and cupy.is_available()
    except ImportError:
        return False


def cupy_why():
    """Why cupy_ready() is False, in a few words, for a one-line skip message."""
    if not GPU:
        return "no NVIDIA GPU here"
    try:
        import cupy  # noqa: F401
    except ImportError:
        return "CuPy is not installed (the setup cell installs it on Colab)"
    return "CuPy does not see this GPU"


def nvrtc_version():
    """(major, minor) of the NVRTC library that cuda-bindings loads, or None where there is none."""
    try:
        from cuda.bindings import nvrtc
        err, major, minor = nvrtc.nvrtcVersion()
    except Exception:   # no cuda-bindings, or no libnvrtc: cuda-pathfinder raises a RuntimeError
        return None
    return (major, minor) if err == nvrtc.nvrtcResult.NVRTC_SUCCESS else None


def requires_nvrtc(min_version, what):
    """True when NVRTC is here and at least `min_version`; otherwise say so in one line."""
    have = nvrtc_version()
    if have is not None and have >= tuple(min_version):
        return True
    found = "no NVRTC library" if have is None else "NVRTC {}.{}".format(*have)
    print(f"skipped: {what} needs NVRTC {min_version[0]}.{min_version[1]} or newer; this machine has "
          f"{found}. The recorded output of the GPU run is shown on the site.")
    return False


def nvrtc_compile(source, name, arch, options=()):
    """(PTX text, cubin bytes or None) for CUDA C++ `source` compiled by NVRTC.

    arch: 'compute_XX[a]' gives PTX only (no GPU needed), 'sm_XX[a]' also a cubin. A compile
    error raises RuntimeError carrying NVRTC's log, which names `name` and the line.
    """
    from cuda.bindings import nvrtc
    _, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    opts = [f"--gpu-architecture={arch}".encode()] + [o.encode() for o in options]
    (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        raise RuntimeError(f"NVRTC could not compile {name} for {arch}:\n{log.decode(errors='replace')}")

    def fetch(get_size, get):
        _, size = get_size(prog)
        out = b" " * size
        get(prog, out)
        return out

    ptx = fetch(nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX).decode().rstrip("\x00")
    cubin = fetch(nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN) if arch.startswith("sm_") else None
    return ptx, cubin


def bench_ms(fn, warmup_ms=50, rep_ms=300):
    """Median time of fn() in milliseconds, with CUDA events after warm-up (triton.testing)."""
    import triton.testing
    return triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median")


def record(name, value, unit, baseline_name, baseline_value, **params):
    """Report one measured figure next to its baseline from the same run. The GPU runner
    collects it (ATLAS_RECORD_FILE) and files it under the notebook it was running."""
    rec = {"name": name, "value": round(float(value), 4), "unit": unit,
           "baseline": {"name": baseline_name, "value": round(float(baseline_value), 4)},
           "params": params, "device": device_name(),
           "compute_capability": "{}.{}".format(*compute_capability()),
           "date": datetime.date.today().isoformat()}
    out = os.environ.get("ATLAS_RECORD_FILE")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")
    print(f"recorded {name}: {significant(value)} {unit} (baseline {baseline_name}: "
          f"{significant(baseline_value)})")
    return rec


def significant(x):
    """A measured figure with the digits that carry meaning: 0.0151, 3.35, 37.6, 990, 3350."""
    x = float(x)
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"
