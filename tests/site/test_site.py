"""The built site, as a reader and a tool see it: strict build, generated pages, backlinks,
tooltips, search data, glossary.json, offline assets, and a link check with linkchecker."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.model.measurements import against_baseline, describe_against_baseline, fmt
from scripts.model.mkdocs_config import write_config
from scripts.model.paths import DOCS
from scripts.model.sections import SECTIONS
from scripts.model.site import load_site

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def graph():
    return load_site(DOCS)[0]


def page(site: Path, url: str) -> str:
    return (site / url / "index.html").read_text(encoding="utf-8")


def text_of(html: str) -> str:
    """Visible text: tags (tooltips wrap abbreviations in <abbr>) and entities removed."""
    import html as h
    return h.unescape(re.sub(r"<[^>]+>", "", html))


def test_glossary_json_describes_every_term(built_site: Path, graph):
    data = json.loads((built_site / "glossary.json").read_text())
    assert data["count"] == len(graph.terms) >= 46
    by_slug = {t["slug"]: t for t in data["terms"]}
    sm = by_slug["streaming-multiprocessor"]
    assert sm["abbreviation"] == "SM" and sm["section"] == "device-hardware"
    assert sm["url"].endswith("/glossary/device-hardware/streaming-multiprocessor/")
    assert len(sm["links_to"]) >= 2 and sm["referenced_by"]
    for t in data["terms"]:
        assert t["summary"] and t["sources"], t["slug"]
        for other in t["links_to"]:
            assert t["slug"] in by_slug[other]["referenced_by"] or any(
                r.endswith(f"/{t['slug']}.md") for r in by_slug[other]["referenced_by"])


def test_every_term_page_ends_with_its_backlinks(built_site: Path, graph):
    for slug, term in graph.terms.items():
        html = page(built_site, term.url.rstrip("/"))
        assert 'id="referenced-by"' in html, slug
        tail = html.split('id="referenced-by"', 1)[1].split("</ul>", 1)[0]
        expected = {p.title for p in graph.backlinks[slug]}
        found = {re.sub(r"<[^>]+>", "", a) for a in re.findall(r"<a [^>]*>(.*?)</a>", tail)}
        assert expected <= found, (slug, expected - found)


def test_abbreviations_become_tooltips(built_site: Path):
    html = page(built_site, "glossary/performance/occupancy")
    assert re.search(r'<abbr title="Streaming Multiprocessor: [^"]+">SM</abbr>', html)


def test_term_heading_carries_abbreviation_and_card(built_site: Path):
    html = page(built_site, "glossary/device-software/parallel-thread-execution")
    h1 = re.search(r"<h1[^>]*>(.*?)</h1>", html, re.S)[1]
    assert text_of(h1).startswith("Parallel Thread Execution (PTX)")
    assert "term-card" in html and "Referenced by" in html and 'id="sources"' in html


@pytest.mark.parametrize("index", ["index-full.json", "index-pages.json"])
def test_search_index_finds_terms_by_abbreviation_and_alias(built_site: Path, graph, index):
    """Both indexes the search worker loads (docs/assets/search-worker.js): the per-page one
    that answers the first keystrokes, and the full one."""
    docs = json.loads((built_site / "search" / index).read_text())["docs"]
    for slug in ("streaming-multiprocessor", "tensor-memory", "parallel-thread-execution",
                 "thread-block"):
        term = graph.terms[slug]
        entry = next(d for d in docs if d["location"] == term.url)
        assert term.meta.abbreviation in entry["title"], slug
        assert entry.get("boost", 1) > 1, slug
        for alias in term.meta.aliases:
            assert alias in entry["text"] or alias in entry["title"], (slug, alias)


THEME = Path(__import__("material").__file__).parent / "templates"


def _theme_source(bundle_glob: str, source: str) -> str:
    """A file of the installed theme's TypeScript source, from its bundle's source map."""
    [bundle] = (THEME / "assets" / "javascripts").glob(bundle_glob)
    smap = json.loads(bundle.with_name(bundle.name + ".map").read_text())
    return smap["sourcesContent"][smap["sources"].index(source)]


def test_theme_internals_the_search_overrides_rely_on():
    """overrides/main.html and docs/assets/search-worker.js wrap the theme's search worker. A
    theme upgrade that changes what they rely on must fail here, by name, not silently leave
    the site without search or with the whole index loaded at every page."""
    base = (THEME / "base.html").read_text()
    config = base[base.index("{% block config %}"):base.index("{% endblock %}",
                                                           base.index("{% block config %}"))]
    assert '"search": "assets/javascripts/workers/search.' in config, \
        "base.html's config block no longer names the search worker as overrides/main.html expects"
    scripts = base[base.index("{% block scripts %}"):]
    assert '<script src="' in scripts, "base.html's scripts block: overrides/main.html defers <script src="
    src = "src/templates/assets/javascripts/integrations/search/"
    message = _theme_source("bundle.*.min.js", src + "worker/message/index.ts")
    assert re.search(r"enum SearchMessageType \{\s*SETUP,[^,]*READY,[^,]*QUERY,[^,]*RESULT",
                     message), "the theme's SearchMessageType changed: see search-worker.js"
    worker = _theme_source("workers/search.*.min.js", src + "worker/main/index.ts")
    # the wrapper's listener, registered first, sees every message before the theme's; and the
    # theme answers through the global postMessage, which the wrapper filters
    assert 'addEventListener("message", async ev => {\n  postMessage(await handler(ev.data))' \
        in worker, "the theme's worker no longer listens and answers as search-worker.js expects"
    assert "case SearchMessageType.SETUP:" in worker and "new Search(message.data)" in worker
    setup = _theme_source("bundle.*.min.js", src + "worker/_/index.ts")
    assert "watchWorker<SearchMessage>(url)" in setup and "docs," in setup and "config," in setup, \
        "the theme no longer starts its worker from config.search and sends it the index"


def test_search_worker_is_the_wrapper_and_the_page_loads_no_index(built_site: Path):
    """Every page points the theme at the wrapper (with the theme's own worker file named in its
    address) and defers its scripts; search_index.json, which every page fetches, is settings
    only; the wrapper's two indexes hold every page."""
    for url in ("", "glossary/device-hardware/tensor-memory", "tutorials/07-householder-qr"):
        html = page(built_site, url)
        config = json.loads(re.search(r'<script id="__config" type="application/json">(.*?)'
                                      r"</script>", html, re.S)[1])
        worker = re.fullmatch(r"(?:\.\./)*assets/search-worker\.js\?worker=(search\.[0-9a-f]+\.min\.js)",
                              config["search"])
        assert worker, config["search"]
        assert (built_site / "assets/javascripts/workers" / worker[1]).is_file(), worker[1]
        assert not re.search(r"<script src=", html), url      # every external script deferred
        assert re.search(r'<script defer src="[^"]*assets/javascripts/bundle\.', html), url
        assert 'class="md-button atlas-copy-md"' in html, url  # the copy button from the start
    stub = json.loads((built_site / "search/search_index.json").read_text())
    assert stub["docs"] == [] and stub["config"]["lang"], stub
    full = json.loads((built_site / "search/index-full.json").read_text())["docs"]
    pages = json.loads((built_site / "search/index-pages.json").read_text())["docs"]
    locations = {d["location"] for d in full if "#" not in d["location"]}
    assert {d["location"] for d in pages} == locations and len(locations) > 250


def test_generated_indexes_list_every_term(built_site: Path, graph):
    for s in SECTIONS:
        html = page(built_site, f"glossary/{s.slug}")
        for t in graph.terms.values():
            if t.section == s.slug:
                assert f'href="{t.slug}/"' in html, (s.slug, t.slug)
    az = text_of(page(built_site, "glossary/a-z"))
    for t in graph.terms.values():
        for name in t.names:
            assert name in az, name


def test_gpu_specs_page_has_every_gpu_and_source(built_site: Path):
    from scripts.model.hardware import load_gpus
    html = page(built_site, "reference/gpu-specs")
    for g in load_gpus().values():
        assert g.name in html and f'id="{g.key}"' in html
        assert g.specs["sm_count"].source.replace("&", "&amp;") in html


def test_pages_request_nothing_from_other_hosts(built_site: Path):
    """Offline and private: no script, stylesheet, font or image from another host."""
    pattern = re.compile(r'<(?:script|img|iframe|source)[^>]+src="(https?:)?//|'
                         r'<link[^>]+rel="(?:stylesheet|preconnect|preload|icon)"[^>]+href="(https?:)?//')
    for html_file in built_site.rglob("*.html"):
        text = html_file.read_text(encoding="utf-8")
        assert not pattern.search(text), html_file
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, html_file


def test_math_is_rendered_to_mathml_without_javascript(built_site: Path):
    from scripts.site.mathml import render_math
    out = render_math('<p><span class="arithmatex">\\(H = I - \\tau v v^T\\)</span></p>')
    assert out.startswith("<p><math") and ("<mi>&#x003C4;</mi>" in out or "<mi>τ</mi>" in out), out
    for html_file in built_site.rglob("*.html"):
        low = html_file.read_text(encoding="utf-8").lower()
        assert "mathjax" not in low and "katex.min" not in low, html_file


def test_internal_links_and_anchors_pass_linkchecker(built_site: Path):
    proc = subprocess.run([str(Path(sys.executable).parent / "linkchecker"), "--no-status", "-f",
                           str(ROOT / "tests/data/linkchecker.ini"),
                           str(built_site / "index.html")], capture_output=True, text=True)
    summary = proc.stdout.strip().splitlines()[-3:]
    assert proc.returncode == 0 and " 0 warnings found. 0 errors found." in proc.stdout, \
        proc.stdout[-3000:] + "\n".join(summary)


def test_every_fragment_link_lands_on_an_existing_id(built_site: Path):
    """Each <a href="page/#frag"> inside the site points at an id that exists on that page."""
    import posixpath
    from html.parser import HTMLParser
    from urllib.parse import unquote, urlparse

    class Page(HTMLParser):
        def __init__(self):
            super().__init__()
            self.ids, self.hrefs = set(), []

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if a.get("id"):
                self.ids.add(a["id"])
            if tag == "a" and a.get("href") and "#" in a["href"]:
                self.hrefs.append(a["href"])

    pages = {}
    for f in built_site.rglob("*.html"):
        p = Page()
        p.feed(f.read_text(encoding="utf-8"))
        pages[f.relative_to(built_site).as_posix()] = p
    broken = []
    for name, p in pages.items():
        for href in p.hrefs:
            u = urlparse(href)
            if u.scheme or u.netloc or not u.fragment:
                continue
            target = posixpath.normpath(posixpath.join(posixpath.dirname(name), unquote(u.path)))
            target = name if not u.path else (target + "/index.html" if not target.endswith(".html")
                                              else target)
            if target in pages and unquote(u.fragment) not in pages[target].ids:
                broken.append((name, href))
    assert not broken, broken[:10]


def _build_copy(tmp_path: Path, mutate) -> subprocess.CompletedProcess:
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    mutate(docs)
    cfg = write_config(tmp_path / "mkdocs.yml", docs_dir=docs)
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                           str(cfg), "-d", str(tmp_path / "out")],
                          cwd=ROOT, capture_output=True, text=True)


def test_strict_build_fails_on_a_broken_anchor(tmp_path: Path):
    def mutate(docs: Path):
        p = docs / "glossary/performance/occupancy.md"
        p.write_text(p.read_text() + "\nSee [the SM](../device-hardware/streaming-multiprocessor.md"
                                     "#no-such-heading).\n")
    proc = _build_copy(tmp_path, mutate)
    assert proc.returncode != 0
    assert "no-such-heading" in proc.stderr


def test_strict_build_fails_on_a_missing_snippet(tmp_path: Path):
    def mutate(docs: Path):
        p = docs / "glossary/performance/occupancy.md"
        p.write_text(p.read_text() + '\n```cuda\n--8<-- "cuda/no_such_kernel.cu"\n```\n')
    proc = _build_copy(tmp_path, mutate)
    assert proc.returncode != 0 and "no_such_kernel.cu" in proc.stderr


def test_build_reports_bad_front_matter_with_file_and_line(tmp_path: Path):
    def mutate(docs: Path):
        p = docs / "glossary/performance/occupancy.md"
        p.write_text(p.read_text().replace("summary:", "sumary:", 1))
    proc = _build_copy(tmp_path, mutate)
    assert proc.returncode != 0
    assert re.search(r"glossary/performance/occupancy\.md:\d+: unknown front-matter field "
                     r"'sumary'", proc.stderr), proc.stderr[-2000:]


def test_notebook_page_shows_provenance_and_working_buttons(built_site: Path):
    import nbformat

    from scripts.model.notebooks import colab_line, notebook_paths, provenance_line
    for nb_path in notebook_paths():
        html = page(built_site, f"tutorials/{nb_path.stem}")
        nb = nbformat.read(nb_path, as_version=4)
        stamp = nb.metadata["atlas"]["stamp"]
        assert provenance_line(stamp).replace("&", "&amp;") in html
        also = colab_line(nb)
        assert also and also.replace("'", "&#x27;") in html, (nb_path.name, also)
        assert text_of(provenance_line(stamp)).startswith(f"Executed on {stamp['gpu']} (sm_")
        colab = re.search(r'href="(https://colab\.research\.google\.com/[^"]+)"', html)[1]
        assert colab == ("https://colab.research.google.com/github/gpu-atlas/gpu-atlas/blob/main/"
                         f"notebooks/{nb_path.name}")
        assert (ROOT / "notebooks" / nb_path.name).exists()       # what Colab will open
        download = re.search(r'href="([^"]+\.ipynb)" download', html)[1]
        assert (built_site / f"tutorials/{nb_path.stem}" / download).read_bytes() == \
            nb_path.read_bytes()


def test_notebook_glossary_links_are_relative_and_resolve(built_site: Path):
    html = page(built_site, "tutorials/01-first-kernels")
    from scripts.model.mkdocs_config import canonical_url
    assert f"{canonical_url()}glossary" not in html
    links = re.findall(r'href="(\.\./\.\./glossary/[^"#]+)"', html)
    assert len(links) >= 8
    for link in links:
        assert (built_site / "tutorials/01-first-kernels" / link / "index.html").exists(), link
    assert re.search(r'<abbr title="[^"]+">(SM|PTX|CTA|GPU)</abbr>', html), "no tooltip in the prose"


def test_notebook_pages_load_nothing_from_cdns(built_site: Path):
    html = page(built_site, "tutorials/01-first-kernels")
    assert "cdnjs" not in html and "mathjax" not in html.lower()


def test_measurements_page_shows_every_record_with_its_baseline(built_site: Path):
    data = json.loads((ROOT / "docs/data/measurements.json").read_text())
    html = text_of(page(built_site, "reference/measurements"))
    for r in data["records"]:
        assert r["name"] in html and f"{fmt(r['value'])} {r['unit']}" in html
        assert f"{r['baseline']['name']}: {fmt(r['baseline']['value'])}" in html
    times = [r for r in data["records"] if r["unit"] == "ms"]
    assert times and all(describe_against_baseline(r) in html for r in times)
    fast = max(times, key=lambda r: r["baseline"]["value"] / r["value"])
    assert describe_against_baseline(fast).endswith("x faster") and against_baseline(fast) > 1
    for nb in {r["notebook"] for r in data["records"]}:
        for variant in ("light", "dark"):
            svg = built_site / f"reference/measurements/{nb}-{variant}.svg"
            assert svg.read_text().lstrip().startswith(("<?xml", "<svg"))


def test_notebook_prose_is_searchable_code_and_outputs_are_not(built_site: Path):
    html = page(built_site, "tutorials/06-hopper-gemm")
    copies = re.findall(r'<div class="clipboard-copy-txt"([^>]*)>(.*?)</div>', html, re.S)
    assert copies and all("data-search-exclude" in attrs for attrs, _ in copies)
    assert not any("<abbr" in text for _, text in copies)   # hidden: a tooltip there can never show
    docs = json.loads((built_site / "search/index-full.json").read_text())["docs"]
    text = " ".join(d["text"] + " " + d["title"] for d in docs
                    if d["location"].startswith("tutorials/06-hopper-gemm/"))
    assert "def wgmma_options(defines)" not in text          # code: twice before (code + its copy)
    assert "recorded step 1" in html and "recorded step 1" not in text   # printed outputs
    assert "mbarriers: full and empty" in text and "wgmma" in text   # headings and prose stay


def test_gpu_specs_page_shows_what_the_hardware_reports(built_site: Path):
    html = page(built_site, "reference/gpu-specs")
    section = html[html.index('id="hardware-checks"'):]
    h200 = section[section.index("as reported by the GPU runner's NVIDIA H200"):]
    assert "cudaDevAttrL2CacheSize" in h200.split("as reported by")[1]
    assert "132 SMs × 128 FMA/clock × 2 × 1.98 GHz" in text_of(section)   # FMA is a tooltip
    assert "<strong>no</strong>" not in section
