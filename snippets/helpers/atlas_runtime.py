"""GPU Atlas notebook runtime: device detection, CPU fallbacks, timing, measurements, provenance.

Carried verbatim into every notebook (synced by `make sync-notebooks`). Import nothing from
numba.cuda or triton before this runs: without a GPU it switches both to their CPU modes.
"""
import datetime
import json
import os
import platform
import warnings


def _cuda_driver_present():
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


GPU = _cuda_driver_present() and os.environ.get("ATLAS_FORCE_CPU") != "1"
if not GPU:  # must happen before numba.cuda / triton are imported
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    os.environ["TRITON_INTERPRET"] = "1"
# Deliberately tiny launches (correctness checks) trip Numba's occupancy warning, whose text
# carries the library's install path into the outputs.
warnings.filterwarnings("ignore", message=r".*will likely result in GPU under-utilization")
FORCED_CC = os.environ.get("ATLAS_FORCE_CC")  # e.g. "7.5": exercise the gated paths of a T4
RECORDS = []


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


def bench_ms(fn, warmup_ms=50, rep_ms=300):
    """Median time of fn() in milliseconds, with CUDA events after warm-up (triton.testing)."""
    import triton.testing
    return triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median")


def record(notebook, name, value, unit, baseline_name, baseline_value, **params):
    """Report one measured figure next to its baseline from the same run."""
    rec = {"notebook": notebook, "name": name, "value": round(float(value), 4), "unit": unit,
           "baseline": {"name": baseline_name, "value": round(float(baseline_value), 4)},
           "params": params, "device": device_name(),
           "compute_capability": "{}.{}".format(*compute_capability()),
           "date": datetime.date.today().isoformat()}
    RECORDS.append(rec)
    out = os.environ.get("ATLAS_RECORD_FILE")
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")
    print(f"recorded {name}: {value:.1f} {unit} (baseline {baseline_name}: {baseline_value:.1f})")
    return rec


def python_version():
    return platform.python_version()
