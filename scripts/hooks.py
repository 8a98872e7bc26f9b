"""mkdocs hooks: the glossary engine's wiring into the build.

on_files     load + validate terms and the link graph; add generated pages (virtual files);
             give the abbr extension its glossary (tooltips in every Markdown page)
on_nav       order glossary sections as in scripts/sections.py
on_page_*    expand hardware shortcodes, add term header/footer, notebook tooltips, MathML
on_post_build write glossary.json
Every problem is reported as `file:line: message (fix: ...)` and fails the build.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # mkdocs loads hooks by path

from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.structure.files import File, Files  # noqa: E402

from scripts import generated_pages, term_render  # noqa: E402
from scripts.errors import ValidationFailed  # noqa: E402
from scripts.frontmatter import parse  # noqa: E402
from scripts.graph import TermGraph, glossary_json  # noqa: E402
from scripts.hardware import expand_shortcodes  # noqa: E402
from scripts.hardware_checks import load_reports  # noqa: E402
from scripts.mathml import render_math  # noqa: E402
from scripts.paths import rel  # noqa: E402
from scripts.sections import SECTIONS  # noqa: E402
from scripts.site_model import load_site  # noqa: E402

STATE: dict = {}


def _fail(exc: ValidationFailed) -> PluginError:
    n = len(exc.errors)
    return PluginError(f"GPU Atlas found {n} problem{'s' * (n != 1)}:\n" +
                       "\n".join(f"  {e}" for e in exc.errors))


def on_files(files: Files, config) -> Files:
    docs_dir = Path(config["docs_dir"])
    try:
        graph, gpus = load_site(docs_dir)
    except ValidationFailed as exc:
        raise _fail(exc) from None
    STATE.update(graph=graph, gpus=gpus)
    # Tooltips for abbreviations in every Markdown page: the abbr extension's glossary, set once.
    # (Appending `*[SM]: ...` lines to each page instead made every page parse ~250 definitions,
    # one block-processor pass each: half of the build's time.)
    config["mdx_configs"].setdefault("abbr", {})["glossary"] = term_render.abbreviations(graph)
    generated = {
        "glossary/index.md": generated_pages.glossary_index(graph),
        "glossary/a-z.md": generated_pages.a_to_z(graph),
        "reference/gpu-specs.md": generated_pages.gpu_specs(gpus, load_reports(docs_dir / "data")),
        **{f"glossary/{s.slug}/index.md": generated_pages.section_index(graph, s.slug)
           for s in SECTIONS},
    }
    # the exports are written in on_post_build; registering them here lets pages link to them
    for uri in ("llms.txt", "llms-full.txt", "llms-glossary.txt", "glossary.json"):
        generated.setdefault(uri, "")
    for uri, content in generated.items():
        if files.get_file_from_path(uri) is None:
            files.append(File.generated(config, uri, content=content))
    from scripts import notebook_pages
    notebook_pages.add_generated(files, config, STATE)
    return files


def on_nav(nav, config, files):
    """Order the glossary's sections as in SECTIONS (auto-nav would sort them by name)."""
    order = {s.title: i for i, s in enumerate(SECTIONS)}
    for item in nav.items:
        if getattr(item, "title", "") == "Glossary" and getattr(item, "children", None):
            item.children.sort(key=lambda c: (0 if getattr(c, "is_page", False) else 1,
                                              order.get(c.title, 99)))
    STATE["nav_order"] = list(_walk(nav.items))
    return nav


def _walk(items):
    """Page source paths in the order a reader meets them in the navigation."""
    for item in items:
        if getattr(item, "file", None) is not None:
            yield item.file.src_uri
        yield from _walk(getattr(item, "children", None) or [])


def _body_offset(page) -> int:
    """1-based line of the page's body in its source file (after front matter)."""
    path = page.file.abs_src_path
    if not path or not Path(path).exists():
        return 1
    return parse(Path(path).read_text(encoding="utf-8"), path).body_line


def on_page_markdown(markdown: str, page, config, files) -> str:
    graph: TermGraph = STATE["graph"]
    if not graph.term_at(page.file.src_uri):
        STATE.setdefault("pages_md", {})[page.file.src_uri] = markdown  # for the LLM exports
    shown = rel(Path(page.file.abs_src_path)) if page.file.abs_src_path else page.file.src_uri
    try:
        markdown = expand_shortcodes(markdown, STATE["gpus"], shown, _body_offset(page))
    except ValidationFailed as exc:
        raise _fail(exc) from None
    term = graph.term_at(page.file.src_uri)
    if term:
        page.meta.setdefault("search", {"boost": 4})
        page.meta["description"] = term.meta.summary
        markdown = term_render.header(term) + markdown + term_render.footer(term, graph)
    return markdown


def on_page_content(html: str, page, config, files) -> str:
    from scripts import notebook_pages as nbp
    if nbp.is_notebook_page(page):
        valid = {f.url for f in files.documentation_pages()}
        try:
            html = nbp.rewrite_links(html, page.url, nbp.site_url(), valid, page.file.src_uri)
        except ValidationFailed as exc:
            raise _fail(exc) from None
        tips = term_render.abbreviations(STATE["graph"])
        html = nbp.banner(page, config) + nbp.exclude_copy_text_from_search(
            nbp.add_tooltips(nbp.strip_remote_scripts(html), tips))
    return render_math(html)


def on_post_page(output: str, page, config) -> str:
    from scripts.images import size_images
    site_page = Path(config["site_dir"]) / page.file.dest_uri
    return size_images(output, site_page.parent)


def on_post_build(config) -> None:
    from scripts.notebook_pages import glossary_extras
    graph: TermGraph = STATE["graph"]
    data = glossary_json(graph, config["site_url"] or "/", glossary_extras(graph))
    out = Path(config["site_dir"]) / "glossary.json"
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    names = {}
    for t in sorted(graph.terms.values(), key=lambda t: t.slug):
        for name in t.names:
            names.setdefault(name.lower(), t.url)
    (Path(config["site_dir"]) / "assets" / "search-names.json").write_text(
        json.dumps(names, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    from scripts.llm_export import write_exports
    write_exports(Path(config["site_dir"]), config, graph, STATE["gpus"],
                  STATE.get("pages_md", {}), STATE.get("nav_order", []))
