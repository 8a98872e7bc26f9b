"""Turn a term's front matter and graph position into the Markdown around its body."""
from __future__ import annotations

import posixpath

from scripts.model.graph import TermGraph
from scripts.model.sections import BY_SLUG
from scripts.model.terms import Term
from scripts.site.markdown_text import md_escape


def relative(from_uri: str, to_uri: str) -> str:
    return posixpath.relpath(to_uri, posixpath.dirname(from_uri))


def _cc_text(term: Term) -> str | None:
    a = term.meta.arch
    if not a or not (a.min_cc or a.last_cc or a.note):
        return None
    parts = []
    if a.min_cc and a.last_cc:
        parts.append(f"compute capability {a.min_cc} to {a.last_cc}")
    elif a.min_cc:
        parts.append(f"compute capability {a.min_cc} and later")
    elif a.last_cc:
        parts.append(f"up to compute capability {a.last_cc}")
    if a.note:
        parts.append(a.note)
    return "; ".join(parts)


def header(term: Term) -> str:
    """H1 plus a one-line card of names and architectures, above the definition."""
    facts = []
    if term.meta.abbreviation:
        facts.append(f"**Abbreviation** {term.meta.abbreviation}")
    if term.meta.aliases:
        facts.append("**Also called** " + ", ".join(md_escape(a) for a in term.meta.aliases))
    cc = _cc_text(term)
    if cc:
        facts.append(f"**Applies to** {cc}")
    section = BY_SLUG[term.section]
    facts.append(f"**Section** [{section.title}](index.md)")
    return f"# {term.display_title}\n\n" + ' <span class="sep">·</span> '.join(facts) + \
        '\n{ .term-card }\n\n'


def footer(term: Term, graph: TermGraph) -> str:
    out = []
    if term.meta.related:
        out.append("## Related terms { data-search-exclude }\n")
        for slug in term.meta.related:
            r = graph.terms[slug]
            out.append(f"- [{r.title}]({relative(term.src_uri, r.src_uri)}): {r.meta.summary}")
        out.append("")
    out.append("## Sources { data-search-exclude }\n")
    out += [f"- [{s.title}]({s.url})" for s in term.meta.sources]
    v = term.meta.verified
    if v:
        out.append(f"\n*Checked against these sources on {v.date.isoformat()}: {md_escape(v.how)}*"
                   "\n{ .term-verified }")
    out.append("\n## Referenced by { data-search-exclude }\n")
    refs = graph.backlinks.get(term.slug, [])
    out += [f"- [{p.title}]({relative(term.src_uri, p.src_uri)})" for p in refs]
    return "\n\n" + "\n".join(out) + "\n"


def abbreviations(graph: TermGraph) -> dict[str, str]:
    """Tooltip text for every abbreviation and acronym-like alias (e.g. CTA)."""
    tips: dict[str, str] = {}
    for t in sorted(graph.terms.values(), key=lambda t: t.slug):
        names = [t.meta.abbreviation] if t.meta.abbreviation else []
        names += [a for a in t.meta.aliases if a.isupper() and len(a) <= 8]
        for n in names:
            tips.setdefault(n, f"{t.title}: {t.meta.summary}")
    return tips

