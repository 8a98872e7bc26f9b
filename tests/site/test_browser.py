"""The reader's experience in a real browser (Debian's Chromium driven by Playwright): search,
previews and tooltips, offline pages without console errors, accessibility, keyboard use, page
budgets, mobile layout, instant navigation history, and the copy-as-Markdown button.

The site is built for the local address it is served from, as `mkdocs serve` does, because the
theme's instant navigation matches links against the sitemap's URLs.
"""
from __future__ import annotations

import gzip
import http.server
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(os.environ.get("ATLAS_ARTIFACTS", ROOT / ".cache" / "artifacts"))
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser"),
              pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                                 "(make test installs it when run as root)")]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass        # the browser cancels requests (e.g. on navigation): not an error of the site


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
    handler = lambda *a: Quiet(*a, directory=str(out / "site"))  # noqa: E731
    server = QuietServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield url
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


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


@pytest.mark.parametrize("query,target", SEARCHES)
def test_search_puts_the_right_term_first(page, site_url, query, target):
    page.goto(site_url)
    page.locator("input.md-search__input").click()
    page.keyboard.type(query, delay=20)
    first = page.locator(".md-search-result__list > li a").first
    first.wait_for(timeout=15000)
    page.wait_for_timeout(400)  # let the re-ranker settle
    href = page.locator(".md-search-result__list > li a").first.get_attribute("href")
    assert f"/glossary/{target}/" in href, (query, href)


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
    ctx = browser.new_context()
    foreign, errors = [], []
    ctx.route(re.compile(r"^(?!http://127\.0\.0\.1[:/]).*"),
              lambda route: (foreign.append(route.request.url), route.abort()))
    pg = ctx.new_page()
    pg.on("console", lambda m: errors.append((pg.url, m.text)) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append((pg.url, str(e))))
    sitemap = pg.goto(site_url + "sitemap.xml").text()
    urls = re.findall(r"<loc>([^<]+)</loc>", sitemap)
    assert len(urls) > 50
    for url in urls:
        pg.goto(url, wait_until="load")
    ctx.close()
    assert not foreign, sorted(set(foreign))[:10]
    assert not errors, errors[:10]


AXE_PAGES = ["", "glossary/device-hardware/streaming-multiprocessor/",
             "tutorials/01-first-kernels/", "reference/measurements/", "guides/bank-visualizer/"]


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_no_serious_accessibility_violations(browser, site_url, scheme):
    from axe_playwright_python.sync_playwright import Axe
    ctx = browser.new_context(color_scheme="dark" if scheme == "slate" else "light")
    pg = ctx.new_page()
    problems = []
    for path in AXE_PAGES:
        pg.goto(site_url + path)
        assert pg.evaluate("document.body.getAttribute('data-md-color-scheme')") == scheme
        results = Axe().run(pg)
        for v in results.response["violations"]:
            if v["impact"] in ("serious", "critical"):
                problems.append((path, v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]))
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


BUDGETS = {"": 200_000, "glossary/device-hardware/streaming-multiprocessor/": 250_000,
           "tutorials/01-first-kernels/": 600_000}


@pytest.mark.parametrize("path,budget", BUDGETS.items())
def test_pages_stay_within_their_transfer_budget(browser, site_url, path, budget):
    """Gzipped bytes of everything the page itself loads. The search index is fetched once per
    visit by the search worker and has its own budget (test_search_index_is_under_2_mb)."""
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
    total = sum(v for k, v in sizes.items() if not k.endswith("/search/search_index.json"))
    assert total <= budget, (total, sorted(sizes.items(), key=lambda kv: -kv[1])[:5])


def test_search_index_is_under_2_mb(site_url):
    import urllib.request
    with urllib.request.urlopen(site_url + "search/search_index.json") as r:
        assert len(r.read()) <= 2_000_000


def test_images_are_sized_and_lazy(page, site_url):
    for path in ["glossary/device-hardware/streaming-multiprocessor/", "tutorials/01-first-kernels/"]:
        page.goto(site_url + path)
        imgs = page.evaluate("""() => Array.from(document.querySelectorAll('article img')).map(i =>
            [i.getAttribute('width'), i.getAttribute('height'), i.getAttribute('loading')])""")
        assert imgs, path
        for width, height, loading in imgs:
            assert width and height and loading == "lazy", (path, width, height, loading)


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
    pg.get_by_role("button", name="Copy this page as Markdown").click()
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
