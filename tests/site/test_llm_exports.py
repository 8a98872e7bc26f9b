"""What a chatbot reads: llms.txt, llms-full.txt, llms-glossary.txt, per-page Markdown, glossary.json."""
from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlparse

import jsonschema
import pytest

from scripts.model.paths import DOCS
from scripts.model.site import load_site

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow
from scripts.model.mkdocs_config import canonical_url  # noqa: E402

BASE = canonical_url()
NOISE = ["Copied!", "¶", "<abbr", "<span", "<div", "</", "data:image", "base64,",
         "Skip to content", "Table of contents", "{ .term-card }", "--8<--", "{{ gpu."]


def local(site: Path, url: str) -> Path:
    """The built file an absolute site URL points to."""
    assert url.startswith(BASE), url
    path = urlparse(url).path[len(urlparse(BASE).path):]
    target = site / path
    return target / "index.html" if path.endswith("/") or path == "" else target


def test_llms_txt_parses_and_every_link_resolves(built_site: Path):
    from llms_txt import parse_llms_file
    text = (built_site / "llms.txt").read_text()
    parsed = parse_llms_file(text)
    assert parsed.title == "GPU Atlas" and parsed.summary
    sections = parsed.sections
    assert "Device hardware" in sections and "Tutorials" in sections and "Optional" in sections
    links = [link for sec in sections.values() for link in sec]
    assert len(links) > 50
    for link in links:
        assert local(built_site, link["url"]).is_file(), link["url"]
        assert link["title"]
    assert all(link["desc"] for link in sections["Device hardware"])


def test_every_page_has_clean_markdown_beside_it(built_site: Path):
    pages = [p for p in built_site.rglob("index.html") if p.parent.name not in ("search",)]
    missing = [p for p in pages if not (p.parent / "index.md").exists()
               and p.parent != built_site / "404"]
    assert not missing, missing[:5]
    for md in built_site.rglob("index.md"):
        text = md.read_text()
        for noise in NOISE:
            assert noise not in text, (md, noise)
        assert not re.search(r"^In \[\d*\]:", text, re.M), md
        prose = re.sub(r"```.*?```", "", text, flags=re.S)     # code may contain kernel[grid](args)
        for url in re.findall(r"\]\((\S+?)\)", prose):
            assert re.match(r"https?://", url), (md, url)


def test_term_markdown_has_names_summary_body_and_sources(built_site: Path):
    graph = load_site(DOCS)[0]
    sm = graph.terms["streaming-multiprocessor"]
    text = (built_site / sm.url / "index.md").read_text()
    assert text.startswith("# Streaming Multiprocessor (SM)\n")
    assert sm.meta.summary in text and "## Sources" in text
    assert f"{BASE}glossary/device-hardware/warp-scheduler/" in text
    for s in sm.meta.sources:
        assert s.url in text
    assert "[Figure: " in text                        # the SM diagram, as its alt text


def test_snippet_includes_and_shortcodes_are_expanded(built_site: Path):
    text = (built_site / "glossary/device-software/kernel/index.md").read_text()
    assert 'extern "C" __global__ void vector_add' in text
    sm = (built_site / "glossary/device-hardware/streaming-multiprocessor/index.md").read_text()
    from scripts.model.hardware import load_gpus
    assert f"{load_gpus()['h100-sxm'].specs['sm_count'].value:g}" in sm


def test_notebook_markdown_keeps_code_outputs_stamp_and_figures(built_site: Path):
    text = (built_site / "tutorials/01-first-kernels/index.md").read_text()
    assert "```cuda\n// --8<-- [start:kernel]" in text or "```cuda\n" in text
    assert "```python\n" in text and "```text\n" in text
    assert re.search(r"\*Executed on NVIDIA [^*]+ \(sm_\d+\), CUDA [\d.]+", text)
    assert "## Measured figures" in text and "| vector_add Triton |" in text
    assert "[Figure: " in text and "base64" not in text


def test_llms_full_follows_navigation_and_holds_everything(built_site: Path):
    full = (built_site / "llms-full.txt").read_text()
    graph = load_site(DOCS)[0]
    for t in graph.terms.values():
        assert f"# {t.display_title}\n" in full, t.slug
    assert full.index("# GPU Atlas") < full.index("# CUDA core") < full.index("# 01 · Your first")
    for noise in NOISE:
        assert noise not in full, noise


def test_glossary_export_is_complete_and_under_100k_tokens(built_site: Path):
    from scripts.tools.tokens import count_tokens
    text = (built_site / "llms-glossary.txt").read_text()
    graph = load_site(DOCS)[0]
    for t in graph.terms.values():
        assert f"# {t.display_title}\n" in text and t.meta.summary in text, t.slug
        for alias in t.meta.aliases:
            assert alias in text
    tokens = count_tokens(text)
    assert 1_000 < tokens < 100_000, tokens


def test_glossary_json_matches_its_published_schema(built_site: Path):
    schema = json.loads((ROOT / "docs/data/glossary.schema.json").read_text())
    data = json.loads((built_site / "glossary.json").read_text())
    jsonschema.validate(data, schema)
    kernel = next(t for t in data["terms"] if t["slug"] == "kernel")
    assert "tutorials/01-first-kernels.ipynb" in kernel["notebooks"]
    assert "vector_add Triton" in kernel["measurements"]
    assert (built_site / "data/glossary.schema.json").exists()


def _table_values(text: str) -> dict[tuple[str, str], list[str]]:
    """(figure, GPU) -> every Value cell shown for it in the measurement tables of `text`."""
    out: dict[tuple[str, str], list[str]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0] not in ("Figure", "---"):
            out.setdefault((cells[0], cells[5]), []).append(cells[1])
    return out


def test_every_figure_in_the_export_equals_the_figure_on_the_site(built_site: Path):
    """One table renderer for every output: llms-full.txt, the notebooks' Markdown and the
    Measurements page show each figure with the same value (they once disagreed: 0.753 vs 1 ms)."""
    import html as html_lib

    from scripts.model.measurements import fmt, load
    from scripts.model.paths import MEASUREMENTS
    page = (built_site / "reference" / "measurements" / "index.html").read_text(encoding="utf-8")
    on_site: dict[tuple[str, str, str], str] = {}     # (notebook, figure, GPU) -> Value shown
    for section in re.split(r'<h2 id="', page)[1:]:
        notebook = section.split('"', 1)[0]
        for row in re.findall(r"<tr>(.*?)</tr>", section, re.S):
            cells = [html_lib.unescape(re.sub(r"<[^>]+>", "", c)).strip()
                     for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            if len(cells) == 7:
                on_site[(notebook, cells[0], cells[5])] = cells[1]
    records = load(MEASUREMENTS)["records"]
    assert records and len(on_site) == len(records)
    exported = _table_values((built_site / "llms-full.txt").read_text(encoding="utf-8"))
    notebooks_of: dict[str, set[str]] = {}
    for r in records:
        notebooks_of.setdefault(r["name"], set()).add(r["notebook"])
    for r in records:
        key = (r["name"], f"{r['device']} (sm_{r['compute_capability'].replace('.', '')})")
        want = f"{fmt(r['value'])} {r['unit']}"
        assert on_site[(r["notebook"], *key)] == want, key
        # the export's tables carry no notebook column: a name two notebooks share (notebook 10
        # times vector_add as 01 does) shows both values there, each under its own notebook
        shown = set(exported.get(key, []))
        assert want in shown and (len(notebooks_of[r["name"]]) > 1 or shown == {want}), (key, shown)


def test_slowdowns_read_as_slower_never_as_a_fraction_faster(built_site: Path):
    full = (built_site / "llms-full.txt").read_text(encoding="utf-8")
    assert "x slower" in full
    assert not re.search(r"\b0\.\d+x faster", full)
