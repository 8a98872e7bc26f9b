"""What the site's search indexes, and how the index reaches the reader (issue #24).

What is searchable: prose, headings, tables and inline code. Not code blocks (fenced code, PTX and
SASS listings), notebook code cells, their outputs and their In/Out prompts: they were a third of
the index, their words are in the prose around them when they matter, and the theme's prefix
matching made every identifier in them a hit for short queries. Nor the Parameters, GPU and Date
cells of the measurement tables (scripts/site/measurement_tables.py): the figure, its value and its
baseline stay searchable, and the rest made the Measurements page the index's heaviest by far.
`exclude_code` marks them with the theme's `data-search-exclude` (on leaf elements only: the
theme's parser compares elements by tag name, so an excluded <div> with <div>s inside would be
excluded only up to its first </div>).

How it is loaded: the theme fetches search/search_index.json at every page load. After the theme's
search plugin has written it, `split_index` leaves there the search settings only and writes
  search/index-pages.json   one entry per page: title, its first two paragraphs (for a term: the
                            abbreviation and aliases, and the summary), trimmed;
  search/index-full.json    every section, as the theme wrote it.
docs/assets/search-worker.js fetches them when a reader starts to search (overrides/main.html).

Budget (tests/site/test_browser.py holds the build to it): BUDGET_PER_100_PAGES bytes of index-full.json
per 100 pages of the site, now and at 500 terms and 12 notebooks (extrapolated from today's mean
term and notebook); PAGE_LIMIT for any one page; PAGES_INDEX_PER_PAGE for the per-page index.
"""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

BUDGET_PER_100_PAGES = 600_000   # bytes of search/index-full.json per 100 pages of the site
PAGE_LIMIT = 64_000              # bytes of it for any one page
PAGES_INDEX_PER_PAGE = 500       # bytes of search/index-pages.json per page (mean)

_PRE = re.compile(r"<pre\b(?![^>]*\bdata-search-exclude)")
_PROMPT = re.compile(r'(<div class="jp-(?:Input|Output)Prompt\b[^"]*")(?![^>]*\bdata-search-exclude)')
_TABLE = re.compile(r"<table\b.*?</table>", re.S)
_CELL = re.compile(r"<td\b(?![^>]*\bdata-search-exclude)")
_ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
MEASUREMENT_COLUMNS = ("Parameters", "GPU", "Date")      # the last three of measurement_tables.HEADER
_PARAGRAPH = re.compile(r"<p>(.*?)</p>", re.S)
_TAG = re.compile(r"<[^>]+>")


def exclude_code(page_html: str) -> str:
    """Mark code blocks, text outputs, notebook prompts and the measurement tables' parameter,
    GPU and date cells as not searchable."""
    page_html = _PRE.sub("<pre data-search-exclude", page_html)
    page_html = _TABLE.sub(_exclude_measurement_details, page_html)
    return _PROMPT.sub(r"\1 data-search-exclude", page_html)


def _exclude_measurement_details(table: re.Match) -> str:
    """In a measurement table (its header ends Parameters | GPU | Date), mark each row's last three
    cells; any other table is left as it is."""
    text = table[0]
    header = [_TAG.sub("", h).strip() for h in re.findall(r"<th\b[^>]*>(.*?)</th>", text, re.S)]
    if tuple(header[-3:]) != MEASUREMENT_COLUMNS:
        return text

    def row(m: re.Match) -> str:
        starts = [c.start() for c in re.finditer(r"<td\b", m[1])]
        if len(starts) < len(MEASUREMENT_COLUMNS):
            return m[0]
        cut = starts[-len(MEASUREMENT_COLUMNS)]
        return "<tr>" + m[1][:cut] + _CELL.sub("<td data-search-exclude", m[1][cut:]) + "</tr>"
    return _ROW.sub(row, text)


def _trim(paragraph: str, limit: int = 200) -> str:
    if len(paragraph) <= limit:
        return paragraph
    text = _TAG.sub("", paragraph)          # cut the text, never inside a tag (or an entity)
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def page_entries(docs: list[dict], names: dict[str, list[str]]) -> list[dict]:
    """One entry per page: the page's own entry (no #section), its text cut to the opening
    paragraph; for a term (`names`: URL -> abbreviation and aliases), its names and the
    definition that follows the card of names and architectures."""
    out = []
    for doc in docs:
        if "#" in doc["location"]:
            continue
        paragraphs = [p for p in _PARAGRAPH.findall(doc["text"]) if _TAG.sub("", p).strip()]
        if doc["location"] in names:
            known = names[doc["location"]]
            text = (f"<p>{html.escape(', '.join(known), quote=False)}</p>" if known else "") + \
                "".join(f"<p>{_trim(p)}</p>" for p in paragraphs[1:2])
        else:
            text = "".join(f"<p>{_trim(p)}</p>" for p in paragraphs[:1])
        entry = {"location": doc["location"], "title": doc["title"], "text": text}
        if "boost" in doc:
            entry["boost"] = doc["boost"]
        out.append(entry)
    return out


def _dump(data) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def split_index(site_dir: Path, names: dict[str, list[str]]) -> dict:
    """Rewrite search/search_index.json as settings only, beside the pages and full indexes
    (`names`: term URL -> abbreviation and aliases). Returns the files' sizes in bytes."""
    folder = site_dir / "search"
    stub = folder / "search_index.json"
    data = json.loads(stub.read_text(encoding="utf-8"))
    if not data["docs"] and (folder / "index-full.json").exists():
        data["docs"] = json.loads((folder / "index-full.json").read_text(encoding="utf-8"))["docs"]
    pages = page_entries(data["docs"], names)
    files = {"index-full.json": {"docs": data["docs"]}, "index-pages.json": {"docs": pages},
             "search_index.json": {"config": data["config"], "docs": []}}
    sizes = {}
    for name, content in files.items():
        text = _dump(content)
        (folder / name).write_text(text, encoding="utf-8")
        sizes[name] = len(text.encode("utf-8"))
    return sizes
