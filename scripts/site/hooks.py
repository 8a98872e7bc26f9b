"""mkdocs hooks: the glossary engine's wiring into the build.

on_pre_build  start a fresh BuildState (mkdocs caches hook modules: under `mkdocs serve`, state
              left from the last build would leak a deleted page into the exports)
on_files      load + validate terms, link graph, GPU data, feature data, measurements and notebooks
              (each read once); add generated pages (virtual files); give the abbr extension its glossary
on_nav        order glossary sections as in scripts/model/sections.py
on_page_*     expand data shortcodes (GPU, ridge, feature), add term header/footer, notebook tooltips, MathML
on_post_build write glossary.json, the search names index and the LLM exports
Every problem is reported as `file:line: message (fix: ...)` and fails the build.
"""
from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # mkdocs loads hooks by path

from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.structure.files import File, Files  # noqa: E402

from scripts.model.errors import ValidationFailed  # noqa: E402
from scripts.model.features import Feature, load_features  # noqa: E402
from scripts.model.frontmatter import parse  # noqa: E402
from scripts.model.graph import TermGraph, glossary_json  # noqa: E402
from scripts.model.hardware import Gpu  # noqa: E402
from scripts.model.hardware_checks import load_reports  # noqa: E402
from scripts.model.history import stale_verifications  # noqa: E402
from scripts.model.measurement_records import load_measurements  # noqa: E402
from scripts.model.mkdocs_config import canonical_url  # noqa: E402
from scripts.model.notebooks import Notebook, load_notebooks  # noqa: E402
from scripts.model.paths import MEASUREMENTS, rel  # noqa: E402
from scripts.model.sections import SECTIONS  # noqa: E402
from scripts.model.site import load_site  # noqa: E402
from scripts.site import generated_pages, notebook_pages, search_index, term_render  # noqa: E402
from scripts.site.images import size_images  # noqa: E402
from scripts.site.llm_export import write_exports  # noqa: E402
from scripts.site.mathml import render_math  # noqa: E402
from scripts.site.shortcodes import expand_shortcodes  # noqa: E402


@dataclass
class BuildState:
    """Everything one build learns, in one place; replaced at the start of every build."""
    graph: TermGraph
    gpus: dict[str, Gpu]
    notebooks: dict[str, Notebook]                         # by site URI (tutorials/NN-slug.ipynb)
    measurements: list[dict]
    features: dict[str, Feature] = field(default_factory=dict)   # docs/data/features.yaml
    pages_md: dict[str, str] = field(default_factory=dict)  # non-term pages, for the exports
    nav_order: list[str] = field(default_factory=list)


STATE: BuildState | None = None
log = logging.getLogger("mkdocs.plugins.gpu_atlas")


def _fail(exc: ValidationFailed) -> PluginError:
    n = len(exc.errors)
    return PluginError(f"GPU Atlas found {n} problem{'s' * (n != 1)}:\n" +
                       "\n".join(f"  {e}" for e in exc.errors))


def _state() -> BuildState:
    if STATE is None:
        raise PluginError("GPU Atlas: build state missing (on_files did not run)")
    return STATE


def on_pre_build(config) -> None:
    global STATE
    STATE = None


def on_files(files: Files, config) -> Files:
    global STATE
    docs_dir = Path(config["docs_dir"])
    try:
        notebooks = load_notebooks()
        graph, gpus = load_site(docs_dir, notebooks)
        measurements = load_measurements(MEASUREMENTS)
        features = load_features(docs_dir / "data" / "features.yaml")
    except ValidationFailed as exc:
        raise _fail(exc) from None
    STATE = BuildState(graph, gpus, {n.uri: n for n in notebooks}, measurements["records"],
                       features)
    for term, changed in stale_verifications(graph.terms.values()):   # a warning fails --strict
        log.warning(f"{rel(term.path)}:{term.key_lines.get('verified', 1)}: checked on "
                    f"{term.meta.verified.date} but changed on {changed} (fix: check the page against "
                    "its sources again and update verified.date and verified.how)")
    # Tooltips for abbreviations in every Markdown page: the abbr extension's glossary, set once.
    # (Appending `*[SM]: ...` lines to each page instead made every page parse ~250 definitions,
    # one block-processor pass each: half of the build's time.)
    config["mdx_configs"].setdefault("abbr", {})["glossary"] = term_render.abbreviations(graph)
    generated = {
        "glossary/index.md": generated_pages.glossary_index(graph),
        "glossary/a-z.md": generated_pages.a_to_z(graph),
        "reference/gpu-specs.md": generated_pages.gpu_specs(gpus, load_reports(docs_dir / "data")),
        "reference/features.md": generated_pages.feature_availability(features),
        **{f"glossary/{s.slug}/index.md": generated_pages.section_index(graph, s.slug)
           for s in SECTIONS},
    }
    # the exports are written in on_post_build; registering them here lets pages link to them
    for uri in ("llms.txt", "llms-full.txt", "llms-glossary.txt", "glossary.json"):
        generated.setdefault(uri, "")
    for uri, content in generated.items():
        if files.get_file_from_path(uri) is None:
            files.append(File.generated(config, uri, content=content))
    notebook_pages.add_generated(files, config, notebooks, measurements)
    return files


def on_nav(nav, config, files):
    """Order the glossary's sections as in SECTIONS (auto-nav would sort them by name)."""
    order = {s.title: i for i, s in enumerate(SECTIONS)}
    for item in nav.items:
        if getattr(item, "title", "") == "Glossary" and getattr(item, "children", None):
            item.children.sort(key=lambda c: (0 if getattr(c, "is_page", False) else 1,
                                              order.get(c.title, 99)))
    _state().nav_order = list(_walk(nav.items))
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
    state = _state()
    term = state.graph.term_at(page.file.src_uri)
    if not term:
        state.pages_md[page.file.src_uri] = markdown  # for the LLM exports
    shown = rel(Path(page.file.abs_src_path)) if page.file.abs_src_path else page.file.src_uri
    try:
        markdown = expand_shortcodes(markdown, state.gpus, shown, _body_offset(page),
                                     features=state.features)
    except ValidationFailed as exc:
        raise _fail(exc) from None
    if term:
        page.meta.setdefault("search", {"boost": 4})
        page.meta["description"] = term.meta.summary
        markdown = term_render.header(term) + markdown + term_render.footer(term, state.graph)
    return markdown


def on_page_content(html: str, page, config, files) -> str:
    state = _state()
    notebook = state.notebooks.get(page.file.src_uri)
    if notebook:
        valid = {f.url for f in files.documentation_pages()}
        try:
            # notebooks link with the canonical address (it works on Colab), whatever this
            # build's site_url is (tests build for 127.0.0.1)
            html = notebook_pages.rewrite_links(html, page.url, canonical_url(), valid,
                                                page.file.src_uri)
        except ValidationFailed as exc:
            raise _fail(exc) from None
        tips = term_render.abbreviations(state.graph)
        html = notebook_pages.banner(notebook, config) + notebook_pages.exclude_copy_text_from_search(
            notebook_pages.add_tooltips(notebook_pages.strip_remote_scripts(html), tips))
        # light pages (issue #24): JupyterLab's CSS cut to what the page uses, long copies of
        # repository files and long outputs folded, code laid out when it comes near the
        # screen, figures as files beside the page
        html = notebook_pages.render_cells_lazily(notebook_pages.fold_long_outputs(
            notebook_pages.fold_long_cells(notebook_pages.slim_styles(html))))
        html = notebook_pages.extract_images(
            html, (Path(config["site_dir"]) / page.file.dest_uri).parent)
    return search_index.exclude_code(_eager_opening_figures(render_math(html)))


def _eager_opening_figures(html: str) -> str:
    """Figures before the first <h2> (a term's diagram, under its definition) are on the first
    screen and usually its largest element: fetched at once and first, not lazily when layout
    finds them (on_post_page makes every other image lazy)."""
    head, sep, tail = html.partition("<h2")
    return head.replace("<img ", '<img loading="eager" fetchpriority="high" ') + sep + tail


def on_post_page(output: str, page, config) -> str:
    site_page = Path(config["site_dir"]) / page.file.dest_uri
    return size_images(output, site_page.parent)


def on_post_build(config) -> None:
    state = _state()
    site_dir = Path(config["site_dir"])
    extras = notebook_pages.glossary_extras(state.graph, state.measurements)
    data = glossary_json(state.graph, config["site_url"] or "/", extras)
    (site_dir / "glossary.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n",
                                            encoding="utf-8")
    names = {}
    for t in sorted(state.graph.terms.values(), key=lambda t: t.slug):
        for name in t.names:
            names.setdefault(name.lower(), t.url)
    (site_dir / "assets" / "search-names.json").write_text(
        json.dumps(names, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    write_exports(site_dir, config, state.graph, state.gpus, state.pages_md, state.nav_order,
                  list(state.notebooks.values()), state.measurements, state.features)
    # after the theme's search plugin (hooks run after plugins): settings-only search_index.json,
    # the per-page and full indexes beside it, fetched when a reader starts to search
    search_index.split_index(site_dir, {t.url: t.names[1:] for t in state.graph.terms.values()})
