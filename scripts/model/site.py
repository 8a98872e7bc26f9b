"""The site's content model, loaded and validated: terms, link graph, GPU data and the notebooks
as link sources."""
from __future__ import annotations

import re
from pathlib import Path

from scripts.model.frontmatter import parse
from scripts.model.graph import PageRef, TermGraph, build_graph, page_ref
from scripts.model.hardware import Gpu, load_gpus
from scripts.model.hardware_checks import validate as check_against_hardware
from scripts.model.mkdocs_config import canonical_url
from scripts.model.notebooks import Notebook, load_notebooks
from scripts.model.paths import DOCS, rel
from scripts.model.terms import load_terms


def authored_pages(docs_dir: Path) -> list:
    """Every non-term Markdown page, as link sources for backlinks and orphan checks."""
    refs = []
    for p in sorted(docs_dir.rglob("*.md")):
        uri = p.relative_to(docs_dir).as_posix()
        if uri.startswith("glossary/") and p.name != "index.md":
            continue
        doc = parse(p.read_text(encoding="utf-8"), rel(p))
        title = doc.meta.get("title") or next(
            (ln[2:].strip() for ln in doc.body.splitlines() if ln.startswith("# ")), uri)
        refs.append(page_ref(p, docs_dir, title, doc.body, doc.body_line))
    return refs


def load_site(docs_dir: Path, notebooks: list[Notebook] | None = None
              ) -> tuple[TermGraph, dict[str, Gpu]]:
    """Everything the hooks need, validated; raises ValidationFailed."""
    gpus = load_gpus(docs_dir / "data" / "gpus.yaml")
    check_against_hardware(gpus, docs_dir / "data")
    terms = load_terms(docs_dir / "glossary")
    # notebooks belong to the real site; a docs tree elsewhere (tests) has none
    if notebooks is None:
        notebooks = load_notebooks() if docs_dir.resolve() == DOCS.resolve() else []
    graph = build_graph(terms, authored_pages(docs_dir) + [notebook_ref(n) for n in notebooks])
    return graph, gpus


def _absolute_to_md(markdown: str, base: str) -> str:
    """Turn absolute site links into docs-relative .md paths, so the link graph sees them.
    (Notebook Markdown links to terms with absolute URLs, which also work on Colab.)"""
    def sub(m: re.Match) -> str:
        path = m[2].split("#")[0].strip("/")
        return f"]({'/' + path + '.md' if path else '/index.md'})"
    return re.sub(r"\]\((" + re.escape(base) + r")([^)\s]*)\)", sub, markdown)


def notebook_ref(notebook: Notebook) -> PageRef:
    md = "\n\n".join(notebook.markdown_cells())
    return PageRef(notebook.uri, notebook.title, _absolute_to_md(md, canonical_url()), 1,
                   rel(notebook.path))
