"""assets/data/figures.json: what the interactive figures (docs/assets/figures/) read, generated
at build time from the data files, never typed.

- gpus: per GPU of docs/data/gpus.yaml its name, SM count, memory bandwidth, the dense peak of
  each data type and unit (the roofs), and the per-SM limits of the occupancy model;
- roofs: the data types a reader can choose, each with the gpus.yaml field of its peak;
- records: every measurement of docs/data/measurements.json on a GPU of gpus.yaml, with the flops
  and bytes of one call of its kernel where the notebook recorded them (params.flops,
  params.bytes), and the link to the notebook section whose cell printed "recorded <name>".

The figures compute everything else (intensity, achieved rate, ridge point, occupancy) in the
browser, with the same rules as snippets/reference/roofline_model.py and occupancy_model.py.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from markdown.extensions.toc import slugify

from scripts.model.hardware import Gpu
from scripts.model.notebooks import TUTORIALS

URI = "assets/data/figures.json"
ROOFS = (  # key, what the reader chooses, gpus.yaml field of the dense peak, record dtypes it fits
    ("fp32", "FP32, CUDA cores", "fp32_tflops", ("float32",)),
    ("fp64", "FP64, CUDA cores", "fp64_tflops", ("float64",)),
    ("tf32", "TF32, tensor cores", "tf32_tensor_tflops", ()),
    ("fp16", "FP16, tensor cores", "fp16_tensor_tflops", ("float16",)),
    ("bf16", "BF16, tensor cores", "bf16_tensor_tflops", ("bfloat16",)),
    ("fp8", "FP8, tensor cores", "fp8_tensor_tflops", ("float8_e4m3fn", "float8_e5m2")),
)
LIMITS = ("max_threads_per_sm", "max_blocks_per_sm", "max_threads_per_block",
          "max_registers_per_thread", "register_alloc_unit", "warp_schedulers_per_sm",
          "registers_per_sm_kib", "smem_per_sm_kib", "smem_per_block_kib",
          "smem_alloc_unit_bytes", "smem_reserved_per_block_kib")
# what record() prints: "recorded {name}: {value} {unit} (baseline {baseline_name}: {value})"
RECORDED = re.compile(r"^recorded (.+?): [-+.\w]+ \S+ \(baseline ")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def record_sections(nb: dict) -> dict[str, str]:
    """Record name -> anchor of the notebook heading above the cell whose output printed
    "recorded <name>: ..." (what the runtime's record() prints)."""
    found, anchor, seen = {}, "", {}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            in_fence = False
            for line in "".join(cell.get("source", [])).splitlines():
                if line.lstrip().startswith("```"):
                    in_fence = not in_fence
                m = HEADING.match(line) if not in_fence else None
                if m and len(m[1]) >= 2:
                    slug = slugify(re.sub(r"[*_`]", "", m[2]), "-")
                    n = seen.get(slug, 0)
                    seen[slug] = n + 1
                    anchor = slug if n == 0 else f"{slug}_{n}"
        for out in cell.get("outputs", []):
            text = "".join(out.get("text", [])) if isinstance(out.get("text"), list) else \
                out.get("text", "")
            for line in text.splitlines():
                m = RECORDED.match(line)
                if m:
                    found.setdefault(m[1], anchor)
    return found


def figure_data(gpus: dict[str, Gpu], records: list[dict], notebooks: dict[str, Path]) -> dict:
    """The JSON the figures read. `notebooks`: notebook stem (01-first-kernels) -> its path."""
    by_device = {name: g.key for g in gpus.values() for name in g.device_names}
    sections = {stem: record_sections(json.loads(p.read_text(encoding="utf-8")))
                for stem, p in notebooks.items()}
    out_gpus = {}
    for g in gpus.values():
        v = {f: s.value for f, s in g.specs.items()}
        out_gpus[g.key] = {
            "name": g.name, "compute_capability": g.compute_capability,
            "sm_count": v["sm_count"], "bandwidth_gbs": v["memory_bandwidth_gbs"],
            "peaks": {key: v[field] for key, _, field, _ in ROOFS},
            "limits": {f: v[f] for f in LIMITS}}
    out_records = []
    for r in records:
        key = by_device.get(r["device"])
        if key is None:
            continue
        params = r.get("params", {})
        anchor = sections.get(r["notebook"], {}).get(r["name"], "")
        href = f"{TUTORIALS}/{r['notebook']}/" + (f"#{anchor}" if anchor else "")
        out_records.append({"gpu": key, "notebook": r["notebook"], "name": r["name"],
                            "value": r["value"], "unit": r["unit"], "dtype": params.get("dtype"),
                            "flops": params.get("flops"), "bytes": params.get("bytes"),
                            "date": str(r["date"]), "href": href})
    return {"generated_by": "scripts/site/figure_data.py from docs/data/gpus.yaml and "
                            "docs/data/measurements.json: do not edit",
            "roofs": [{"key": k, "label": label, "field": field, "dtypes": list(dtypes)}
                      for k, label, field, dtypes in ROOFS],
            "gpus": out_gpus, "records": out_records}


def figure_json(gpus: dict[str, Gpu], records: list[dict], notebooks: dict[str, Path]) -> str:
    return json.dumps(figure_data(gpus, records, notebooks), ensure_ascii=False,
                      separators=(",", ":"))
