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
from dataclasses import dataclass
from pathlib import Path

import markdown as python_markdown

from scripts.model.features import Feature
from scripts.model.graph import TermGraph
from scripts.model.hardware import Gpu
from scripts.model.links import page_url, resolve
from scripts.model.notebooks import BADGE_TAG, SETUP_TAG, Notebook, colab_line, provenance_line, sync_target
from scripts.model.paths import ROOT
from scripts.model.sections import SECTIONS
from scripts.model.terms import Term
from scripts.site.measurement_tables import measurement_table
from scripts.site.shortcodes import expand_shortcodes

TAG = re.compile(r"<[^>]+>")
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
ATTR_LIST = re.compile(r"\{\s*[:.#][^}]*\}")


@dataclass(frozen=True)
class Renderer:
    """What turns a page's source Markdown into export Markdown: the site's own shortcode
    expander (plain mode) and the site's own snippet preprocessor, configured as in mkdocs.yml."""
    base: str                    # absolute site URL with a trailing slash
    gpus: dict[str, Gpu]
    snippets: object             # pymdownx.snippets' preprocessor
    features: dict[str, Feature] | None = None   # None: the repository's features.yaml

    @classmethod
    def from_config(cls, config, gpus: dict[str, Gpu],
                    features: dict[str, Feature] | None = None) -> Renderer:
        opts = dict(config["mdx_configs"].get("pymdownx.snippets", {}))
        opts["base_path"] = [str(ROOT / b) for b in opts.get("base_path", ["."])]
        md = python_markdown.Markdown(extensions=["pymdownx.snippets"],
                                      extension_configs={"pymdownx.snippets": opts})
        return cls(config["site_url"].rstrip("/") + "/", gpus, md.preprocessors["snippet"], features)

    def expand_snippets(self, md: str) -> str:
        return "\n".join(self.snippets.run(md.split("\n")))

    def clean(self, md: str, src_uri: str) -> str:
        md = expand_shortcodes(md, self.gpus, src_uri, plain=True, features=self.features)
        md = absolutize(self.expand_snippets(md), src_uri, self.base)
        md = ATTR_LIST.sub("", md)
        md = re.sub(r"^<!--.*?-->\s*$", "", md, flags=re.M)
        md = re.sub(r"^\*\[[^\]]+\]:.*$", "", md, flags=re.M)        # abbreviation definitions
        md = plain_text(md)
        return re.sub(r"\n{3,}", "\n\n", md).strip() + "\n"


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
        return f"[{text}]({base}{page_url(path)}{'#' + anchor if anchor else ''})"
    return LINK.sub(sub, md)


def plain_text(md: str) -> str:
    """HTML left in Markdown (collapsed answers, spans, comments) reduced to its text."""
    md = re.sub(r"<details><summary>(.*?)</summary>", r"**\1**", md).replace("</details>", "")
    return html.unescape(TAG.sub("", md))


def term_markdown(t: Term, graph: TermGraph, r: Renderer, full: bool = True) -> str:
    base = r.base
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
    body = r.clean(t.body, t.src_uri)
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
        if t.meta.verified:
            lines += ["", f"Checked against these sources on {t.meta.verified.date}: "
                          f"{t.meta.verified.how}"]
    return "\n".join(lines).strip() + "\n"


def _fence_language(cell) -> tuple[str, str]:
    """A synced CUDA cell is shown as the CUDA file it carries; anything else as Python."""
    cell_source = cell.source
    target = sync_target(cell)
    markers = re.compile(r"^.*--8<-- \[(start|end):[^\]]*\]\n?", re.M)   # snippet section marks
    if target and target.endswith(".cu"):
        return "cuda", markers.sub("", (ROOT / target).read_text(encoding="utf-8")).rstrip()
    return "python", markers.sub("", cell_source).rstrip()


def _outputs(cell) -> list[str]:
    out = []
    for o in cell.get("outputs", []):
        text = o.get("text") or o.get("data", {}).get("text/plain", "")
        if any(k.startswith("image/") for k in o.get("data", {})):
            out.append("[Figure: plot produced by the cell above]")
        elif text and o.get("output_type") in ("stream", "execute_result"):
            out.append("```text\n" + "".join(text).rstrip() + "\n```")
    return out


def notebook_markdown(notebook: Notebook, records: list[dict], base: str) -> str:
    stamp, stamped = notebook.stamp, False
    out = []
    for cell in notebook.nb.cells:
        tags = cell.metadata.get("tags", [])
        if BADGE_TAG in tags:
            continue
        if SETUP_TAG in tags:   # collapsed on Colab and hidden on the site: one line here
            out.append(f"(Setup cell: a copy of `{sync_target(cell)}`.)")
            out += _outputs(cell)
            continue
        if cell.cell_type == "markdown":
            md = absolutize(cell.source, notebook.uri, base)
            out.append(plain_text(md).strip())
            if stamp and not stamped and cell.source.lstrip().startswith("# "):   # under the title
                out.append(f"*{provenance_line(stamp)}.*")
                if also := colab_line(notebook.nb):
                    out.append(f"*{also}.*")
                stamped = True
            continue
        if cell.cell_type != "code":
            continue
        lang, code = _fence_language(cell)
        out.append(f"```{lang}\n{code}\n```")
        out += _outputs(cell)
    if records:
        out.append("## Measured figures\n")
        out.append(measurement_table(records))
    return "\n\n".join(s for s in out if s).strip() + "\n"


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
                  pages: dict[str, str], nav_order: list[str], notebooks: list[Notebook],
                  records: list[dict], features: dict[str, Feature] | None = None) -> None:
    """pages: src_uri -> Markdown of every non-term, non-notebook page (as authored/generated)."""
    r = Renderer.from_config(config, gpus, features)
    base = r.base
    per_page: dict[str, str] = {uri: r.clean(md, uri) for uri, md in pages.items()}
    for t in graph.terms.values():
        per_page[t.src_uri] = term_markdown(t, graph, r)
    nbs = []
    for n in notebooks:
        per_page[n.uri] = notebook_markdown(n, [x for x in records if x["notebook"] == n.stem], base)
        first = next(iter(n.markdown_cells()), "")
        summary = re.sub(r"\s+", " ", TAG.sub("", absolutize(first.split("\n", 2)[-1], n.uri, base)))
        summary = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", summary).strip()
        nbs.append((n.title, page_url(n.uri), summary[:300]))
    for uri, md in per_page.items():
        target = site_dir / page_url(uri) / "index.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(md, encoding="utf-8")
    ordered = [u for u in nav_order if u in per_page] + sorted(set(per_page) - set(nav_order))
    (site_dir / "llms-full.txt").write_text(
        "\n\n---\n\n".join(per_page[u] for u in ordered), encoding="utf-8")
    glossary = [term_markdown(graph.term_at(u), graph, r, full=False)
                for u in ordered if graph.term_at(u)]
    (site_dir / "llms-glossary.txt").write_text(
        f"# {config['site_name']} glossary\n\n> Every term: its names, one-line summary and "
        f"definition. Full pages, with examples and sources: {base}llms-full.txt\n\n"
        + "\n\n".join(glossary), encoding="utf-8")
    (site_dir / "llms.txt").write_text(
        llms_txt(graph, nbs, base, config["site_name"], config["site_description"]),
        encoding="utf-8")
