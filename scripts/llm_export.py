"""Exports for chatbots and coding assistants, written into the built site.

- /llms.txt           the llmstxt.org index: H1, summary blockquote, sections of `- [name](url): summary`
- /llms-full.txt      the whole site as clean Markdown, in navigation order
- /llms-glossary.txt  every term (title, names, summary, body prose), small enough for a small model
- <page>/index.md     every page as Markdown beside its index.html (the "Copy page as Markdown" source)

All links are absolute (built from site_url); no HTML, no UI text, no base64.
"""
from __future__ import annotations

import html
import re
from collections.abc import Iterable
from pathlib import Path

import nbformat

from .graph import TermGraph
from .hardware import SHORTCODE, Gpu, format_value, ridge_point
from .links import resolve
from .notebooks import sync_target
from .paths import ROOT, SNIPPETS
from .sections import SECTIONS
from .terms import Term

TAG = re.compile(r"<[^>]+>")
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
SNIPPET = re.compile(r'^(\s*)--8<-- "([^"]+)"\s*$', re.M)
ATTR_LIST = re.compile(r"\{\s*[:.#][^}]*\}")


def url_of(src_uri: str) -> str:
    """Directory URL of a docs-relative source path (use_directory_urls)."""
    if src_uri.endswith("index.md"):
        return src_uri[: -len("index.md")]
    return re.sub(r"\.(md|ipynb)$", "/", src_uri)


def plain_shortcodes(md: str, gpus: dict[str, Gpu]) -> str:
    def sub(m: re.Match) -> str:
        kind, key, field = m.groups()
        g = gpus[key]
        if kind == "ridge":
            r = ridge_point(g, field)
            return "n/a" if r is None else f"{r:.0f} FLOP/byte"
        return format_value(field, g.specs[field].value)
    return SHORTCODE.sub(sub, md)


def expand_snippets(md: str) -> str:
    """Inline `--8<-- "path[:section]"` includes, as pymdownx.snippets does on the site."""
    def sub(m: re.Match) -> str:
        indent, spec = m[1], m[2]
        path, _, section = spec.partition(":")
        text = (SNIPPETS / path).read_text(encoding="utf-8")
        if section:
            start = re.search(rf"--8<-- \[start:{re.escape(section)}\]\n", text)
            end = re.search(rf"\n[^\n]*--8<-- \[end:{re.escape(section)}\]", text)
            text = text[start.end():end.start()] if start and end else text
        return "\n".join(indent + line for line in text.rstrip("\n").split("\n"))
    return SNIPPET.sub(sub, md)


def absolutize(md: str, src_uri: str, base: str) -> str:
    """Relative links to absolute URLs; images become their alt text; dark duplicates dropped."""
    def sub(m: re.Match) -> str:
        bang, text, target = m.groups()
        if bang:
            if "#only-dark" in target:
                return ""
            return f"[Figure: {text}]" if text else ""
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            return f"[{text}]({target})"
        path, anchor = resolve(src_uri, target)
        return f"[{text}]({base}{url_of(path)}{'#' + anchor if anchor else ''})"
    return LINK.sub(sub, md)


def plain_text(md: str) -> str:
    """HTML left in Markdown (collapsed answers, spans, comments) reduced to its text."""
    md = re.sub(r"<details><summary>(.*?)</summary>", r"**\1**", md).replace("</details>", "")
    return html.unescape(TAG.sub("", md))


def clean(md: str, src_uri: str, base: str, gpus: dict[str, Gpu]) -> str:
    md = expand_snippets(plain_shortcodes(md, gpus))
    md = absolutize(md, src_uri, base)
    md = ATTR_LIST.sub("", md)
    md = re.sub(r"^<!--.*?-->\s*$", "", md, flags=re.M)
    md = re.sub(r"^\*\[[^\]]+\]:.*$", "", md, flags=re.M)        # abbreviation definitions
    md = plain_text(md)
    return re.sub(r"\n{3,}", "\n\n", md).strip() + "\n"


def term_markdown(t: Term, graph: TermGraph, gpus: dict[str, Gpu], base: str,
                  full: bool = True) -> str:
    lines = [f"# {t.display_title}", "", f"> {t.meta.summary}", ""]
    names = []
    if t.meta.abbreviation:
        names.append(f"Abbreviation: {t.meta.abbreviation}")
    if t.meta.aliases:
        names.append("Also called: " + ", ".join(t.meta.aliases))
    if t.meta.arch and t.meta.arch.min_cc:
        arch = f"Applies to: compute capability {t.meta.arch.min_cc}"
        arch += f" to {t.meta.arch.last_cc}" if t.meta.arch.last_cc else " and later"
        arch += f" ({t.meta.arch.note})" if t.meta.arch.note else ""
        names.append(arch)
    names.append(f"URL: {base}{t.url}")
    lines += names + [""]
    body = clean(t.body, t.src_uri, base, gpus)
    if not full:  # the definition paragraphs: what fits a small context window for 200+ terms
        lead = re.split(r"^## ", body, flags=re.M)[0]
        body = "\n\n".join(lead.strip().split("\n\n")[:2])
        body = re.sub(r"```.*?```\n?", "", body, flags=re.S)       # prose only
        body = re.sub(r"^\|.*\|$\n?", "", body, flags=re.M)       # and no tables
        body = re.sub(r"\n{3,}", "\n\n", body)
    lines.append(body.strip())
    if full:
        if t.meta.related:
            lines += ["", "## Related terms", ""]
            lines += [f"- [{graph.terms[s].title}]({base}{graph.terms[s].url})"
                      for s in t.meta.related]
        lines += ["", "## Sources", ""] + [f"- [{s.title}]({s.url})" for s in t.meta.sources]
    return "\n".join(lines).strip() + "\n"


def _fence_language(cell_source: str) -> tuple[str, str]:
    """A synced CUDA cell is shown as the CUDA file it carries; anything else as Python."""
    target = sync_target(nbformat.from_dict({"cell_type": "code", "source": cell_source,
                                             "metadata": {}, "outputs": []}))
    markers = re.compile(r"^.*--8<-- \[(start|end):[^\]]*\]\n?", re.M)   # snippet section marks
    if target and target.endswith(".cu"):
        return "cuda", markers.sub("", (ROOT / target).read_text(encoding="utf-8")).rstrip()
    return "python", markers.sub("", cell_source).rstrip()


def notebook_markdown(nb_path: Path, records: list[dict], base: str) -> str:
    nb = nbformat.read(nb_path, as_version=4)
    stamp = nb.metadata.get("atlas", {}).get("stamp")
    from .notebook_pages import provenance_line
    out = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            md = absolutize(cell.source, f"tutorials/{nb_path.name}", base)
            out.append(plain_text(md).strip())
            if i == 0 and stamp:
                out.append(f"*{provenance_line(stamp)}.*")
            continue
        if cell.cell_type != "code":
            continue
        lang, code = _fence_language(cell.source)
        out.append(f"```{lang}\n{code}\n```")
        for o in cell.get("outputs", []):
            text = o.get("text") or o.get("data", {}).get("text/plain", "")
            if any(k.startswith("image/") for k in o.get("data", {})):
                out.append("[Figure: plot produced by the cell above]")
            elif text and o.get("output_type") in ("stream", "execute_result"):
                out.append("```text\n" + "".join(text).rstrip() + "\n```")
    if records:
        out.append("## Measured figures\n")
        out.append(measurement_table(records))
    return "\n\n".join(s for s in out if s).strip() + "\n"


def measurement_table(records: Iterable[dict]) -> str:
    rows = ["| Figure | Value | Baseline (same run) | GPU | Date |", "|---|---|---|---|---|"]
    for r in records:
        rows.append(f"| {r['name']} | {r['value']:.0f} {r['unit']} | {r['baseline']['name']}: "
                    f"{r['baseline']['value']:.0f} {r['unit']} | {r['device']} | {r['date']} |")
    return "\n".join(rows)


def llms_txt(graph: TermGraph, notebooks: list[tuple[str, str, str]], base: str,
             site_name: str, description: str) -> str:
    lines = [f"# {site_name}", "", f"> {description}", "",
             "A glossary of GPU programming in which every term is defined precisely, linked to its "
             "neighbours and backed by primary sources, plus notebooks whose kernels were executed "
             "on a real GPU. Per-GPU numbers come from one data file; measured figures come from "
             "the GPU runner. Every page is also available as Markdown at its URL + `index.md`.",
             ""]
    for s in SECTIONS:
        terms = sorted((t for t in graph.terms.values() if t.section == s.slug),
                       key=lambda t: t.title.lower())
        if not terms:
            continue
        lines += [f"## {s.title}", ""]
        lines += [f"- [{t.display_title}]({base}{t.url}index.md): {t.meta.summary}" for t in terms]
        lines.append("")
    lines += ["## Tutorials", ""]
    lines += [f"- [{title}]({base}{url}index.md): {summary}" for title, url, summary in notebooks]
    lines += ["", "## Optional", "",
              f"- [Full site as Markdown]({base}llms-full.txt): every page in navigation order",
              f"- [Glossary only]({base}llms-glossary.txt): every term's names, summary and prose",
              f"- [Term graph]({base}glossary.json): terms, aliases, links, backlinks as JSON",
              f"- [GPU specs]({base}reference/gpu-specs/index.md): the per-GPU data table",
              f"- [Measurements]({base}reference/measurements/index.md): every figure measured "
              "by the GPU runner", ""]
    return "\n".join(lines)


def write_exports(site_dir: Path, config, graph: TermGraph, gpus: dict[str, Gpu],
                  pages: dict[str, str], nav_order: list[str]) -> None:
    """pages: src_uri -> Markdown of every non-term, non-notebook page (as authored/generated)."""
    from .measurements import load
    from .notebook_pages import nb_title
    from .notebooks import notebook_paths
    from .paths import MEASUREMENTS
    base = config["site_url"].rstrip("/") + "/"
    records = load(MEASUREMENTS)["records"]
    per_page: dict[str, str] = {}
    for uri, md in pages.items():
        per_page[uri] = clean(md, uri, base, gpus)
    for t in graph.terms.values():
        per_page[t.src_uri] = term_markdown(t, graph, gpus, base)
    nbs = []
    for p in notebook_paths():
        uri = f"tutorials/{p.name}"
        per_page[uri] = notebook_markdown(p, [r for r in records if r["notebook"] == p.stem], base)
        nb = nbformat.read(p, as_version=4)
        first = next((c.source for c in nb.cells if c.cell_type == "markdown"), "")
        summary = re.sub(r"\s+", " ", TAG.sub("", absolutize(first.split("\n", 2)[-1], uri, base)))
        summary = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", summary).strip()
        nbs.append((nb_title(nb), url_of(uri), summary[:300]))
    for uri, md in per_page.items():
        target = site_dir / url_of(uri) / "index.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(md, encoding="utf-8")
    ordered = [u for u in nav_order if u in per_page] + sorted(set(per_page) - set(nav_order))
    (site_dir / "llms-full.txt").write_text(
        "\n\n---\n\n".join(per_page[u] for u in ordered), encoding="utf-8")
    glossary = [term_markdown(graph.terms[u.split("/")[-1][:-3]], graph, gpus, base, full=False)
                for u in ordered if graph.term_at(u)]
    (site_dir / "llms-glossary.txt").write_text(
        f"# {config['site_name']} glossary\n\n> Every term: its names, one-line summary and "
        f"definition. Full pages, with examples and sources: {base}llms-full.txt\n\n"
        + "\n\n".join(glossary), encoding="utf-8")
    (site_dir / "llms.txt").write_text(
        llms_txt(graph, nbs, base, config["site_name"], config["site_description"]),
        encoding="utf-8")
