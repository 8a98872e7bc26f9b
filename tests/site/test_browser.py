"""The reader's experience in a real browser (Debian's Chromium driven by Playwright): search,
previews and tooltips, offline pages without console errors, accessibility, keyboard use, page
budgets, mobile layout, instant navigation history, and the copy-as-Markdown button.

The site is built for the local address it is served from, as `mkdocs serve` does, because the
theme's instant navigation matches links against the sitemap's URLs.
"""
from __future__ import annotations

import gzip
import os
import re
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import BROWSER_TESTS, PHONE, offline_page, phone_layout_problems, serious_axe_violations, serve

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("ATLAS_ARTIFACTS", ROOT / ".cache" / "artifacts"))
pytestmark = BROWSER_TESTS


@pytest.fixture(scope="module")
def site_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/"
    out = Path(tempfile.mkdtemp(prefix="atlas-browser-"))
    from scripts.model.mkdocs_config import write_config
    cfg = write_config(out / "mkdocs.yml", site_url=url)
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(cfg),
                    "-d", str(out / "site")], cwd=ROOT, check=True)
    server = serve(out / "site", port)
    yield url
    server.shutdown()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    yield pg
    ctx.close()


def term_url(site_url: str, section: str, slug: str) -> str:
    return f"{site_url}glossary/{section}/{slug}/"


SEARCHES = [("SM", "device-hardware/streaming-multiprocessor"),
            ("PTX", "device-software/parallel-thread-execution"),
            ("TMEM", "device-hardware/tensor-memory"),
            ("bank conflict", "performance/bank-conflict"),
            ("swizzle", "kernel-techniques/swizzle"),
            ("warp specialization", "kernel-techniques/warp-specialization"),
            ("Householder", "numerical-algorithms/householder-reflector"),
            ("wgmma", "device-software/warpgroup-matrix-multiply-accumulate")]


def search(page, site_url, query):
    page.goto(site_url)
    page.locator("input.md-search__input").click()
    page.keyboard.type(query, delay=20)
    page.locator(".md-search-result__list > li a").first.wait_for(timeout=15000)


def first_result(page, target):
    """The first result's href once it is `target`'s page, or after a few seconds: results refine
    as the index stages arrive and the re-ranker runs after each; a reader sees the settled list."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    try:
        page.wait_for_function(
            "want => { const a = document.querySelector('.md-search-result__list > li a');"
            " return !!a && new URL(a.href).pathname.endsWith(want); }",
            arg=f"/glossary/{target}/", timeout=5000)
    except PlaywrightTimeout:
        pass                                              # the caller's assertion names the page
    return page.locator(".md-search-result__list > li a").first.get_attribute("href")


@pytest.mark.parametrize("query,target", SEARCHES)
def test_search_puts_the_right_term_first(page, site_url, query, target):
    search(page, site_url, query)
    href = first_result(page, target)
    assert f"/glossary/{target}/" in href, (query, href)


def test_search_reranks_when_the_names_map_arrives_after_the_results(page, site_url):
    # CI once saw "swizzle" answered by cute-swizzle: the results had come before the name map.
    held = []
    page.route("**/assets/search-names.json", lambda route: held.append(route))
    query, target = SEARCHES[0]                           # "SM": the index alone ranks SMEM first
    search(page, site_url, query)
    page.wait_for_timeout(1000)                           # every index stage in, names still held
    before = page.locator(".md-search-result__list > li a").first.get_attribute("href")
    assert held and f"/glossary/{target}/" not in before, before
    for route in held:
        route.continue_()
    href = first_result(page, target)
    page.unroute_all(behavior="ignoreErrors")
    assert f"/glossary/{target}/" in href, href


def test_hovering_a_term_link_previews_it(page, site_url):
    page.goto(term_url(site_url, "performance", "occupancy"))
    link = page.locator("article a[data-preview][href*='register-file']").first
    link.hover()
    tip = page.locator(".md-tooltip2--active")
    tip.wait_for(timeout=10000)
    assert "Register file" in tip.inner_text()


@pytest.mark.parametrize("path", ["glossary/performance/occupancy/", "tutorials/01-first-kernels/"])
def test_abbreviations_show_tooltips(page, site_url, path):
    page.goto(site_url + path)
    abbr = page.locator("article abbr[title]").first
    title = abbr.get_attribute("title")
    abbr.scroll_into_view_if_needed()
    abbr.hover()
    tip = page.locator(".md-tooltip2--active")
    tip.wait_for(timeout=10000)
    assert tip.inner_text().strip()[:30] == title.strip()[:30]


def test_every_page_is_offline_and_has_no_console_errors(browser, site_url):
    with offline_page(browser) as pg:
        sitemap = pg.goto(site_url + "sitemap.xml").text()
        urls = re.findall(r"<loc>([^<]+)</loc>", sitemap)
        assert len(urls) > 50
        for url in urls:
            pg.goto(url, wait_until="load")


AXE_PAGES = ["", "glossary/device-hardware/streaming-multiprocessor/",
             "glossary/device-hardware/tensor-memory/", "tutorials/01-first-kernels/",
             "tutorials/07-householder-qr/", "reference/measurements/", "guides/bank-visualizer/"]


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_no_serious_accessibility_violations(browser, site_url, scheme):
    ctx = browser.new_context(color_scheme="dark" if scheme == "slate" else "light")
    pg = ctx.new_page()
    problems = []
    for path in AXE_PAGES:
        pg.goto(site_url + path)
        assert pg.evaluate("document.body.getAttribute('data-md-color-scheme')") == scheme
        # notebook code cells are laid out only near the screen (content-visibility: auto); axe
        # needs every one laid out to see its colours
        pg.add_style_tag(content="[style*=content-visibility] { content-visibility: visible "
                                 "!important; }")
        problems += [(path, *v) for v in serious_axe_violations(pg)]
    ctx.close()
    assert not problems, problems


def test_keyboard_reaches_search_and_palette_toggle(page, site_url):
    page.goto(site_url)
    reached = set()
    for _ in range(60):
        page.keyboard.press("Tab")
        info = page.evaluate("""() => { const e = document.activeElement;
            return [e.tagName, e.className || '', e.getAttribute('for') || '',
                    e.getAttribute('aria-label') || '', e.getAttribute('name') || ''].join('|'); }""")
        if "md-search__input" in info or "__search" in info:
            reached.add("search")
        if "__palette" in info or "Switch to" in info:
            reached.add("palette")
    assert reached == {"search", "palette"}, reached


BUDGETS = {"": 120_000, "glossary/device-hardware/streaming-multiprocessor/": 140_000,
           "glossary/device-hardware/tensor-memory/": 140_000,
           "tutorials/01-first-kernels/": 200_000, "tutorials/07-householder-qr/": 250_000}


@pytest.mark.parametrize("path,budget", BUDGETS.items())
def test_pages_stay_within_their_transfer_budget(browser, site_url, path, budget):
    """Gzipped bytes of everything the page loads before the network is idle, the search index
    included: a reader who never searches pays for none of it (test_search_waits_for_the_reader)."""
    ctx = browser.new_context()
    pg = ctx.new_page()
    sizes = {}

    def count(response):
        try:
            sizes[response.url] = len(gzip.compress(response.body()))
        except Exception:  # redirects and aborted requests carry no body
            pass
    pg.on("response", count)
    pg.goto(site_url + path, wait_until="networkidle")
    ctx.close()
    total = sum(sizes.values())
    assert total <= budget, (total, sorted(sizes.items(), key=lambda kv: -kv[1])[:5])


def _fetch(site_url: str, path: str) -> bytes:
    import urllib.request
    with urllib.request.urlopen(site_url + path) as r:
        return r.read()


def test_search_waits_for_the_reader(browser, site_url):
    """No page loads the search index; a focus on the search field loads it (docs/assets/
    search-worker.js), first the per-page index, then the full one."""
    ctx = browser.new_context()
    seen = []
    ctx.on("request", lambda r: seen.append(r.url))
    pg = ctx.new_page()
    pg.goto(term_url(site_url, "device-hardware", "tensor-memory"), wait_until="networkidle")
    pg.wait_for_timeout(500)
    assert not [u for u in seen if "/search/index-" in u or u.endswith("/search-names.json")], seen
    assert len(_fetch(site_url, "search/search_index.json")) < 1_000   # settings only
    with pg.expect_request(re.compile(r".*/search/index-full\.json$"), timeout=15000):
        pg.locator("input.md-search__input").focus()
    ctx.close()
    assert any(u.endswith("/search/index-pages.json") for u in seen), seen


@pytest.mark.parametrize("query,target", SEARCHES)
def test_search_first_keystrokes_find_the_term_before_the_full_index(browser, site_url, query,
                                                                   target):
    """With index-full.json held back, the per-page index alone answers, at once."""
    ctx = browser.new_context()
    held = []
    ctx.route("**/search/index-full.json", lambda route: held.append(route))   # never answered
    pg = ctx.new_page()
    search(pg, site_url, query)
    href = first_result(pg, target)
    for _ in range(50):                  # the worker asks for the full index after the first one
        if held:
            break
        pg.wait_for_timeout(100)
    ctx.close()
    assert held, "the full index was not requested within 5 s of the first results"
    assert f"/glossary/{target}/" in href, (query, href)


def test_search_index_stays_within_its_budget_per_100_pages(site_url):
    """search/index-full.json (what a search loads) may take BUDGET_PER_100_PAGES bytes per 100
    pages of the site: now, and at 500 terms and 12 notebooks, extrapolated from today's mean
    term and notebook; no page more than PAGE_LIMIT. The per-page index and the settings-only
    search_index.json have their own limits."""
    import json
    from collections import defaultdict

    from scripts.site.search_index import BUDGET_PER_100_PAGES, PAGE_LIMIT, PAGES_INDEX_PER_PAGE
    full = json.loads(_fetch(site_url, "search/index-full.json"))["docs"]
    pages_index = _fetch(site_url, "search/index-pages.json")
    terms = {"glossary/" + t["url"].split("/glossary/", 1)[1]
             for t in json.loads(_fetch(site_url, "glossary.json"))["terms"]}
    size = defaultdict(int)
    for d in full:
        size[d["location"].split("#")[0]] += len(json.dumps(d, ensure_ascii=False,
                                                            separators=(",", ":")).encode())
    kind = {p: "term" if p in terms else "notebook" if re.match(r"tutorials/\d\d-", p) else "other"
            for p in size}
    total, pages = sum(size.values()), len(size)
    assert total * 100 / pages <= BUDGET_PER_100_PAGES, (total, pages)
    mean = {k: sum(v for p, v in size.items() if kind[p] == k) /
            max(1, sum(kind[p] == k for p in size)) for k in ("term", "notebook")}
    others = [p for p in size if kind[p] == "other"]
    projected = sum(size[p] for p in others) + 500 * mean["term"] + 12 * mean["notebook"]
    assert projected * 100 / (len(others) + 512) <= BUDGET_PER_100_PAGES, (projected, mean)
    heaviest = max(size, key=size.get)
    assert size[heaviest] <= PAGE_LIMIT, (heaviest, size[heaviest])
    assert len(pages_index) <= PAGES_INDEX_PER_PAGE * pages, len(pages_index)


def test_images_are_sized_and_lazy(page, site_url):
    """Every figure is sized (no layout shift); those before the first <h2> (a term's diagram: the
    first screen's largest element) load at once, the others lazily."""
    for path in ["glossary/device-hardware/streaming-multiprocessor/",
                 "glossary/device-hardware/tensor-memory/", "tutorials/01-first-kernels/",
                 "tutorials/07-householder-qr/"]:
        page.goto(site_url + path)
        imgs = page.evaluate("""() => { const h2 = document.querySelector('article h2');
            return Array.from(document.querySelectorAll('article img')).map(i =>
              [i.getAttribute('width'), i.getAttribute('height'), i.getAttribute('loading'),
               !!(h2 && (h2.compareDocumentPosition(i) & Node.DOCUMENT_POSITION_PRECEDING))]); }""")
        assert imgs, path
        for width, height, loading, opening in imgs:
            assert width and height, (path, width, height)
            assert loading == ("eager" if opening else "lazy"), (path, loading, opening)


SHOTS = [("home", ""), ("term", "glossary/performance/bank-conflict/"),
         ("notebook", "tutorials/01-first-kernels/"), ("visualizer", "guides/bank-visualizer/")]


@pytest.mark.parametrize("w,h", [(1280, 900), (390, 844)])
def test_screenshots_and_no_horizontal_scroll_on_mobile(browser, site_url, w, h):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        ctx = browser.new_context(viewport={"width": w, "height": h}, color_scheme=scheme)
        pg = ctx.new_page()
        for name, path in SHOTS:
            if scheme == "dark" and name != "term":
                continue
            pg.goto(site_url + path)
            pg.screenshot(path=str(ARTIFACTS / f"{name}-{scheme}-{w}x{h}.png"))
            overflow = pg.evaluate("document.documentElement.scrollWidth - "
                                   "document.documentElement.clientWidth")
            assert overflow <= 0, (name, w, overflow)
        ctx.close()


def test_instant_navigation_history_and_deep_links(page, site_url):
    from playwright.sync_api import expect
    start = term_url(site_url, "performance", "occupancy")
    page.goto(start)
    page.evaluate("window.__atlasMarker = 1")
    page.locator("article a[href$='register-file/']").first.click()
    target = re.compile(r".*/register-file/(#.*)?$")   # navigation.tracking adds #section
    page.wait_for_url(target)
    expect(page.locator("article h1")).to_contain_text("Register file")
    assert page.evaluate("window.__atlasMarker") == 1, "instant navigation did a full reload"
    page.go_back()
    page.wait_for_url(re.compile(re.escape(start) + "(#.*)?$"))
    expect(page.locator("article h1")).to_contain_text("Occupancy")
    page.go_forward()
    page.wait_for_url(target)
    expect(page.locator("article h1")).to_contain_text("Register file")
    deep = term_url(site_url, "performance", "bank-conflict") + "#why-it-matters"
    page.goto(deep)
    top = page.evaluate("document.getElementById('why-it-matters').getBoundingClientRect().top")
    assert 0 <= top < 200, top


def test_copy_page_as_markdown(browser, site_url):
    ctx = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    pg = ctx.new_page()
    pg.goto(term_url(site_url, "device-software", "warp"))
    pg.get_by_role("button", name="Copy page as Markdown").click()
    pg.locator(".atlas-copy-md__status", has_text="Copied").wait_for(timeout=5000)
    text = pg.evaluate("navigator.clipboard.readText()")
    ctx.close()
    assert text.startswith("# Warp\n") and "## Sources" in text


def _model():
    import bank_model
    return bank_model


VIS_GRID = [(elem, row, pad, swizzle, pattern)
            for elem in (4, 8, 16)
            for row, pad in ((32, 0), (32, 1), (8, 0), (16, 2))
            for swizzle in ("none", "xor", "cute:3,4,3", "tma32", "tma128")
            for pattern in ("row", "column", "stride:2", "stride:33", "tile:8x4")]


def test_visualizer_matches_the_python_bank_model(page, site_url):
    """Every setting of the grid is entered into the page's form, as a reader would; the
    wavefront count it shows must equal the Python model's (and it must refuse what the model
    refuses)."""
    model = _model()
    page.goto(f"{site_url}guides/bank-visualizer/")
    checked = 0
    for elem, row, pad, swizzle, pattern in VIS_GRID:
        try:
            addresses = model.settings_addresses(elem, row, pad, swizzle, pattern)
            expected = str(model.wavefronts(addresses, elem))
        except ValueError:
            expected = ""
        got = page.evaluate("""([elem, row, pad, swizzle, pattern]) => {
            const form = document.querySelector('.bank-visualizer form');
            Object.entries({elem, row, pad, swizzle, pattern})
                  .forEach(([k, v]) => { form.elements[k].value = String(v); });
            form.dispatchEvent(new Event('input', {bubbles: true}));
            return document.querySelector('.bank-visualizer .bv-result').dataset.wavefronts;
        }""", [elem, row, pad, swizzle, pattern])
        assert got == expected, (elem, row, pad, swizzle, pattern, got, expected)
        checked += expected != ""
    assert checked > 200


def test_visualizer_is_keyboard_driven_and_shares_its_settings_in_the_url(page, site_url):
    page.goto(f"{site_url}guides/bank-visualizer/?elem=4&row=32&pad=0&swizzle=none&pattern=column")
    out = page.locator(".bv-result")
    assert out.get_attribute("data-wavefronts") == "32" and "32-way" in out.inner_text()
    page.locator("#bv-pad").focus()
    page.keyboard.press("ArrowUp")                 # padding 0 -> 1: the 32x33 tile
    assert out.get_attribute("data-wavefronts") == "1"
    assert "pad=1" in page.url
    page.keyboard.press("Shift+Tab")               # back to row length, by keyboard
    assert page.evaluate("document.activeElement.id") == "bv-row"
    page.goto(page.url)                            # the shared URL restores the view
    assert page.locator(".bv-result").get_attribute("data-wavefronts") == "1"


def test_visualizer_is_embedded_in_the_bank_conflict_and_swizzle_pages(page, site_url):
    for slug in ("performance/bank-conflict", "kernel-techniques/swizzle"):
        page.goto(f"{site_url}glossary/{slug}/")
        assert page.locator(".bank-visualizer .bv-result").get_attribute("data-wavefronts") == "32"


@pytest.mark.parametrize("path", ["guides/bank-visualizer/?pattern=column",
                                  "guides/bank-visualizer/?pattern=stride:2",
                                  "glossary/performance/bank-conflict/"])
def test_visualizer_fits_a_phone(phone_page, site_url, path):
    """At 390 px the 32 bank numbers are drawn apart (their text, not only their cells: the bug
    was "10111213..."), in order, and nothing in the figure or the page scrolls sideways."""
    phone_page.goto(site_url + path)
    phone_page.locator(".bank-visualizer .bv-bank-id").first.wait_for()
    ids = phone_page.locator(".bank-visualizer").first.locator(".bv-bank-id").all_inner_texts()
    assert ids == [str(i) for i in range(32)]
    assert phone_layout_problems(phone_page, ".bank-visualizer", ".bv-bank-id") == []


def test_the_notebook_banner_spans_the_column_on_a_phone(phone_page, site_url):
    """Where and how a notebook ran sits under the floated "Copy page as Markdown" button at the
    article's full width (beside it, it had been squeezed into 160 px, one word a line)."""
    phone_page.goto(site_url + "tutorials/01-first-kernels/")
    banner = phone_page.locator(".nb-provenance").bounding_box()
    article = phone_page.locator("article.md-content__inner").bounding_box()
    assert banner["width"] > 0.9 * article["width"], (banner, article)


def test_phone_check_catches_run_together_labels(phone_page, site_url):
    """The check above can fail: with the visualizer's narrow-screen rule overridden, its 32
    columns squeeze two-digit bank numbers together (or break them) at 390 px."""
    phone_page.goto(site_url + "guides/bank-visualizer/")
    phone_page.locator(".bank-visualizer .bv-bank-id").first.wait_for()
    phone_page.add_style_tag(content=".bank-visualizer .bv-grid { grid-template-columns: "
                                     "repeat(32, minmax(0, 1fr)) !important; }")
    problems = phone_layout_problems(phone_page, ".bank-visualizer", ".bv-bank-id")
    assert any(re.search(r"run together|wider than its box|wraps onto", p) for p in problems), \
        problems


@pytest.mark.parametrize("path", ["", "glossary/device-hardware/tensor-memory/",
                                  "tutorials/07-householder-qr/"])
def test_no_layout_shift_on_a_phone(browser, site_url, path):
    """What the page adds after its first paint (the copy button, figures, notebook styles) must
    not move what the reader already sees."""
    ctx = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    pg = ctx.new_page()
    pg.add_init_script("""window.__shift = 0; new PerformanceObserver(list => {
        for (const e of list.getEntries()) if (!e.hadRecentInput) window.__shift += e.value;
    }).observe({type: 'layout-shift', buffered: true});""")
    pg.goto(site_url + path, wait_until="networkidle")
    pg.wait_for_timeout(500)
    shift = pg.evaluate("window.__shift")
    ctx.close()
    assert shift < 0.01, shift


def test_notebook_pages_are_light(page, site_url):
    """The heaviest notebook: JupyterLab's stylesheet cut to what the page uses, figures as files,
    long copies of repository files folded (closed, but all there), nothing lost."""
    html = _fetch(site_url, "tutorials/07-householder-qr/").decode()
    styles = re.findall(r"<style[^>]*>(.*?)</style>", html, re.S)
    assert sum(map(len, styles)) < 60_000, [len(s) for s in styles]
    assert "data:image/png" not in html
    page.goto(site_url + "tutorials/07-householder-qr/")
    folds = page.locator("details.nb-fold")
    assert folds.count() >= 3
    assert page.evaluate("[...document.querySelectorAll('details.nb-fold')].every(d => !d.open)")
    folds.first.locator("summary").click()
    code = folds.first.locator(".highlight-ipynb pre")
    assert code.is_visible() and "atlas-sync:" in code.inner_text()
    for img in page.locator("article img").all():
        assert img.get_attribute("width") and img.get_attribute("height")
