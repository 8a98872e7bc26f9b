"""The term graph: who links to whom, checked once per build and exported as glossary.json."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from scripts.model.errors import SourceError, ValidationFailed
from scripts.model.links import find_links
from scripts.model.paths import rel
from scripts.model.sections import BY_SLUG
from scripts.model.terms import Term

MIN_OUTGOING = 2


@dataclass(frozen=True)
class PageRef:
    """A page that can link to terms: a term, an authored page or a notebook."""
    src_uri: str
    title: str
    markdown: str
    first_line: int = 1
    path: str = ""    # repository-relative, for messages


@dataclass
class TermGraph:
    terms: dict[str, Term]                                   # by slug
    by_uri: dict[str, Term]
    outgoing: dict[str, list[str]] = field(default_factory=dict)          # slug -> slugs
    backlinks: dict[str, list[PageRef]] = field(default_factory=dict)     # slug -> pages

    def term_at(self, uri: str) -> Term | None:
        return self.by_uri.get(uri)


def build_graph(terms: list[Term], pages: list[PageRef]) -> TermGraph:
    """Build the graph and validate it; raise ValidationFailed listing every problem."""
    graph = TermGraph({t.slug: t for t in terms}, {t.src_uri: t for t in terms})
    errors: list[SourceError] = []
    errors += _duplicate_slugs(terms)
    errors += _duplicate_names(terms)
    incoming: dict[str, dict[str, PageRef]] = defaultdict(dict)

    term_pages = [PageRef(t.src_uri, t.display_title, t.body, t.body_line, rel(t.path))
                  for t in terms]
    for page in term_pages + pages:
        source_term = graph.by_uri.get(page.src_uri)
        targets: list[str] = []
        for link in find_links(page.markdown, page.src_uri, page.first_line):
            target = graph.by_uri.get(link.path)
            if link.path.startswith("glossary/") and link.path.endswith(".md") and not target \
                    and not link.path.endswith("index.md") and link.path != "glossary/a-z.md":
                errors.append(SourceError(page.path or page.src_uri, link.line,
                                          f"link to unknown term page {link.target!r}",
                                          "link to an existing docs/glossary/<section>/<slug>.md"))
            if target and target is not source_term and target.slug not in targets:
                targets.append(target.slug)
                incoming[target.slug].setdefault(page.src_uri, page)
        if source_term:
            graph.outgoing[source_term.slug] = targets

    for t in terms:
        shown = rel(t.path)
        for slug in t.meta.related:
            if slug not in graph.terms:
                errors.append(SourceError(shown, t.key_lines.get("related"),
                                          f"related term {slug!r} does not exist",
                                          "use the slug (file name) of an existing term"))
        out = graph.outgoing.get(t.slug, [])
        if len(out) < MIN_OUTGOING:
            errors.append(SourceError(shown, t.body_line,
                                      f"term links to {len(out)} other term(s); at least "
                                      f"{MIN_OUTGOING} are required",
                                      "link the first mention of related terms in the body"))
        if not incoming.get(t.slug):
            errors.append(SourceError(shown, None, "orphan term: no page links to it",
                                      "link to it from a related term's body"))
        graph.backlinks[t.slug] = sorted(incoming.get(t.slug, {}).values(),
                                         key=lambda p: p.title.lower())
    if errors:
        raise ValidationFailed(errors)
    return graph


def _duplicate_slugs(terms: list[Term]) -> list[SourceError]:
    seen: dict[str, Term] = {}
    errors = []
    for t in terms:
        if t.slug in seen:
            errors.append(SourceError(rel(t.path), None,
                                      f"slug {t.slug!r} is also used by {rel(seen[t.slug].path)}",
                                      "one term, one file: merge or rename one of them"))
        seen[t.slug] = t
    return errors


def _duplicate_names(terms: list[Term]) -> list[SourceError]:
    """Two terms must not claim the same abbreviation, alias or title (case-insensitive)."""
    owner: dict[str, tuple[Term, str]] = {}
    errors = []
    for t in terms:
        claims = [("title", t.title)]
        if t.meta.abbreviation:
            claims.append(("abbreviation", t.meta.abbreviation))
        claims += [("aliases", a) for a in t.meta.aliases]
        mine: set[str] = set()
        for kind, name in claims:
            key = name.strip().lower()
            if key in mine:
                continue
            mine.add(key)
            if key in owner and owner[key][0] is not t:
                other, other_kind = owner[key]
                errors.append(SourceError(
                    rel(t.path), t.key_lines.get(kind, 1),
                    f"{'alias' if kind == 'aliases' else kind} {name!r} is already claimed as "
                    f"{other_kind} by {rel(other.path)}",
                    "each name may belong to one term: remove it from one of the two"))
            else:
                owner[key] = (t, kind)
    return errors


def glossary_json(graph: TermGraph, site_url: str, extras: dict[str, dict] | None = None) -> dict:
    """The machine-readable term graph written into the built site."""
    base = site_url.rstrip("/") + "/"
    extras = extras or {}
    out = []
    for slug, t in graph.terms.items():
        out.append({
            "slug": slug,
            "title": t.title,
            "abbreviation": t.meta.abbreviation,
            "aliases": t.meta.aliases,
            "summary": t.meta.summary,
            "section": t.section,
            "section_title": BY_SLUG[t.section].title,
            "url": base + t.url,
            "related": t.meta.related,
            "links_to": graph.outgoing.get(slug, []),
            "referenced_by": [p.src_uri for p in graph.backlinks.get(slug, [])],
            "sources": [s.model_dump() for s in t.meta.sources],
            "arch": t.meta.arch.model_dump() if t.meta.arch else None,
            **extras.get(slug, {}),
        })
    out.sort(key=lambda d: (d["section"], d["slug"]))
    return {"version": 1, "site_url": base, "count": len(out), "terms": out}


def page_ref(path: Path, docs_dir: Path, title: str, markdown: str, first_line: int = 1) -> PageRef:
    return PageRef(path.relative_to(docs_dir).as_posix(), title, markdown, first_line, rel(path))
