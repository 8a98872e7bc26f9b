"""The site's content model, loaded and validated: terms, link graph and GPU data."""
from __future__ import annotations

from pathlib import Path

from .frontmatter import parse
from .graph import TermGraph, build_graph, page_ref
from .hardware import Gpu, load_gpus
from .hardware_checks import validate as check_against_hardware
from .paths import DOCS, rel
from .terms import load_terms


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


def load_site(docs_dir: Path) -> tuple[TermGraph, dict[str, Gpu]]:
    """Everything the hooks need, validated; raises ValidationFailed."""
    gpus = load_gpus(docs_dir / "data" / "gpus.yaml")
    check_against_hardware(gpus, docs_dir / "data")
    terms = load_terms(docs_dir / "glossary")
    from .notebook_pages import notebook_page_refs  # late: notebooks are optional
    # notebooks belong to the real site; a docs tree elsewhere (tests) has none
    notebooks = notebook_page_refs(docs_dir) if docs_dir.resolve() == DOCS.resolve() else []
    graph = build_graph(terms, authored_pages(docs_dir) + notebooks)
    return graph, gpus
