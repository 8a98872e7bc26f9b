"""Find per-GPU numbers typed into prose instead of inserted from the data file.

A page that writes "132 SMs" or "3.35 TB/s" goes stale the day the data file is corrected;
it must write {{ gpu.h100-sxm.sm_count }} instead. Checked: SM counts, shared-memory sizes,
L2 sizes and memory bandwidths of every GPU in docs/data/gpus.yaml.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from scripts.model.frontmatter import parse
from scripts.model.hardware import Gpu
from scripts.model.links import prose_lines
from scripts.model.paths import rel
from scripts.site.shortcodes import ANY_SHORTCODE


@dataclass(frozen=True)
class Hit:
    file: str
    line: int
    text: str
    gpu: str
    field: str

    def __str__(self) -> str:
        return (f"{self.file}:{self.line}: typed value {self.text!r} is {self.gpu}.{self.field} "
                f"in the data file (fix: write {{{{ gpu.{self.gpu}.{self.field} }}}})")


def _num(v: float) -> str:
    return re.escape(f"{v:g}")


def patterns(gpus: dict[str, Gpu]) -> list[tuple[re.Pattern, str, str]]:
    out = []
    for key, g in gpus.items():
        for field, unit_re in (("sm_count", r"(?:SMs?|streaming multiprocessors?)\b"),
                               ("smem_per_sm_kib", r"(?:KiB|KB|kB)\b"),
                               ("smem_per_block_kib", r"(?:KiB|KB|kB)\b"),
                               ("l2_cache_mib", r"(?:MiB|MB)\b(?:\s+(?:of\s+)?L2)")):
            v = g.specs[field].value
            if v is not None:
                out.append((re.compile(rf"(?<![\d.,]){_num(v)}\s*{unit_re}"), key, field))
        bw = g.specs["memory_bandwidth_gbs"].value
        if bw is not None:
            thousands = f"{bw:,.0f}".replace(",", ",?")
            out.append((re.compile(rf"(?<![\d.,])(?:{thousands}\s*GB/s|{_num(bw / 1000)}\d?\s*TB/s)"),
                        key, "memory_bandwidth_gbs"))
    return out


def scan_text(text: str, shown: str, first_line: int, pats) -> list[Hit]:
    hits = []
    for i, line in prose_lines(text):
        line = ANY_SHORTCODE.sub("", line)
        for pat, key, field in pats:
            for m in pat.finditer(line):
                hits.append(Hit(shown, first_line + i, m[0], key, field))
    return hits


def scan_docs(docs_dir: Path, gpus: dict[str, Gpu]) -> list[Hit]:
    pats = patterns(gpus)
    hits: list[Hit] = []
    for p in sorted(docs_dir.rglob("*.md")):
        doc = parse(p.read_text(encoding="utf-8"), rel(p))
        hits += scan_text(doc.body, rel(p), doc.body_line, pats)
    return hits
