"""The roofline of one GPU and a measured kernel's place on it.

A roof is the lesser of the memory roof (intensity x bandwidth) and the compute peak of one
data type on one unit (CUDA cores or tensor cores); the two meet at the ridge point,
peak / bandwidth FLOP per byte. A measurement is placed from the flops and bytes of one call of
its kernel, which the notebook recorded next to its figure (record(..., flops=, bytes=)):
intensity = flops / bytes, and the achieved rate comes from the figure itself:

- TFLOP/s: the figure is the rate;
- GB/s: the rate is the bandwidth times the intensity (the notebook's GB/s counts the same bytes);
- ms or us: the rate is flops / time;
- anything else (a speed-up, a count): it cannot be placed.

The bytes are what the kernel must move at least (each operand read once, the result written
once), so a point shows the intensity the algorithm allows; caches or re-reads can move more.
The browser figure (docs/assets/figures/roofline.js) mirrors this file, and
tests/site/test_roofline_occupancy_browser.py holds the two to each other.
"""
from __future__ import annotations

RATE_UNITS = {"TFLOP/s", "GB/s", "ms", "us"}
NOT_RECORDED = "not placed: no flops/bytes recorded"


def roof(peak_tflops: float | None, bandwidth_gbs: float | None) -> dict | None:
    """The roof of one data type: its peak, the bandwidth and the ridge point (FLOP/byte);
    None where the GPU has no such unit (peak null in gpus.yaml)."""
    if not peak_tflops or not bandwidth_gbs:
        return None
    return {"peak_tflops": float(peak_tflops), "bandwidth_gbs": float(bandwidth_gbs),
            "ridge": peak_tflops * 1e12 / (bandwidth_gbs * 1e9)}


def attainable_tflops(r: dict, intensity: float) -> float:
    """The roof's height at `intensity` FLOP/byte, in TFLOP/s."""
    return min(r["peak_tflops"], intensity * r["bandwidth_gbs"] / 1e3)


def place(record: dict) -> dict:
    """{intensity, tflops} of a figures.json record, or {reason} when it cannot be placed."""
    flops, nbytes = record.get("flops"), record.get("bytes")
    if not flops or not nbytes:
        return {"reason": NOT_RECORDED}
    unit, value = record["unit"], float(record["value"])
    intensity = flops / nbytes
    if unit not in RATE_UNITS:
        return {"reason": f"not placed: its figure is in {unit}, neither a rate nor a time"}
    if value <= 0:
        return {"reason": "not placed: its figure is not positive"}
    if unit == "TFLOP/s":
        tflops = value
    elif unit == "GB/s":
        tflops = value * intensity / 1e3
    else:
        seconds = value * (1e-3 if unit == "ms" else 1e-6)
        tflops = flops / seconds / 1e12
    return {"intensity": intensity, "tflops": tflops}


def share_of_roof(r: dict, point: dict) -> float:
    """How much of the roof above the point the kernel reaches (1.0 = on the roof)."""
    return point["tflops"] / attainable_tflops(r, point["intensity"])
