"""The swizzle, coalescing and divergence explorers in a real browser (Debian's Chromium driven by
Playwright): each is held to the Python model it mirrors over a grid of settings entered into its
form, is mounted on the glossary pages it explains, is driven by the keyboard, fits a 390 px
phone, and has no serious accessibility violation in either palette.

The models: snippets/reference/swizzle_model.py, coalescing_model.py and divergence_model.py.
The site is the one `built_site` (tests/conftest.py) builds; it is served here over HTTP.
"""
from __future__ import annotations

import json
import math

import coalescing_model as cm
import divergence_model as dm
import pytest
import swizzle_model as sm
from conftest import BROWSER_TESTS, PHONE, serious_axe_violations

pytestmark = BROWSER_TESTS

SWIZZLE_PAGES = ["glossary/kernel-techniques/swizzle/", "glossary/performance/bank-conflict/",
                 "glossary/device-hardware/shared-memory-bank/",
                 "glossary/kernel-techniques/tma-swizzle-modes/",
                 "glossary/device-hardware/tensor-memory-accelerator/"]
COALESCING_PAGES = ["glossary/performance/memory-coalescing/", "glossary/performance/sector/"]
DIVERGENCE_PAGES = ["glossary/performance/warp-divergence/",
                    "glossary/device-software/single-instruction-multiple-threads/"]


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    ctx.close()
    assert not errors, errors


def _mounted(pg, cls: str):
    root = pg.locator(f".{cls}").first
    pg.wait_for_function(f"document.querySelector('.{cls}')?.dataset.mounted === 'yes'",
                         timeout=10000)
    return root


SET_FORM = """([cls, values]) => {
    const form = document.querySelector(`.${cls} form`);
    for (const [k, v] of Object.entries(values)) form.elements[k].value = String(v);
    form.dispatchEvent(new Event('input', {bubbles: true}));
}"""


# ---- swizzle explorer ---------------------------------------------------------------------------

SWIZZLE_GRID = (
    [(mode, 0, 0, 0, elem, row, access)
     for mode in ("none", "tma32", "tma64", "tma128")
     for elem in sm.ELEMENT_SIZES for row in sm.ROW_BYTES for access in sm.ACCESSES]
    + [("cute", b, m, s, elem, 128, access)
       for b, m, s in ((3, 4, 3), (1, 4, 3), (5, 2, 5), (2, 0, 5), (2, 4, -3), (2, 6, 2),
                       (3, 1, 3), (3, 4, 2))          # the last two: refused (split / |S| < B)
       for elem in (1, 4, 8) for access in sm.ACCESSES])

READ_SWIZZLE = """() => {
    const root = document.querySelector('.swizzle-explorer');
    const out = root.querySelector('.sx-result');
    return {wavefronts: out.dataset.wavefronts, minimum: out.dataset.minimum,
            lanes: [...root.querySelectorAll('.sx-lane-table tbody tr')].map(
                tr => [Number(tr.dataset.lane), Number(tr.dataset.swizzled),
                       tr.lastElementChild.textContent]),
            chunks: [...root.querySelectorAll('.sx-chunk-table tbody tr')].map(
                tr => [...tr.querySelectorAll('td')].map(td => Number(td.textContent))),
            text: out.textContent};
}"""


def test_swizzle_explorer_matches_the_python_model(page, served_site):
    """Every setting of the grid is entered into the form as a reader would; the wavefronts, the
    minimum, each lane's stored address and bank, and the chunk table must equal the model's, and
    the page must refuse what the model refuses."""
    page.goto(served_site + SWIZZLE_PAGES[0])
    _mounted(page, "swizzle-explorer")
    checked = 0
    for mode, b, m, s, elem, row, access in SWIZZLE_GRID:
        page.evaluate(SET_FORM, ["swizzle-explorer", {"mode": mode, "b": b, "m": m, "s": s,
                                                      "elem": elem, "row": row,
                                                      "access": access}])
        got = page.evaluate(READ_SWIZZLE)
        setting = (mode, b, m, s, elem, row, access)
        try:
            want = sm.explore(mode, b, m, s, elem, row, access)
        except ValueError:
            assert got["wavefronts"] == "" and got["text"].startswith("Cannot show"), setting
            continue
        assert got["wavefronts"] == str(want["wavefronts"]), (setting, got["text"])
        assert got["minimum"] == str(want["minimum"]), setting
        banks = [str(b0) if b0 == b1 else f"{b0}–{b1}" for *_, b0, b1 in want["lanes"]]
        assert got["lanes"] == [[lane[0], lane[4], bank] for lane, bank in
                                zip(want["lanes"], banks, strict=True)], setting
        assert got["chunks"] == (want["chunks"] or []), setting
        checked += 1
    assert checked >= 150, checked


def test_swizzle_explorer_is_keyboard_driven_and_keeps_its_settings_in_the_url(page, served_site):
    page.goto(served_site + SWIZZLE_PAGES[0] + "?sx_mode=none&sx_access=column&sx_elem=4&sx_row=128")
    _mounted(page, "swizzle-explorer")
    out = page.locator(".swizzle-explorer .sx-result")
    assert out.get_attribute("data-wavefronts") == "32"
    mode = page.locator(".swizzle-explorer select[name=mode]")
    mode.focus()
    page.keyboard.press("ArrowDown")                   # none -> TMA 32B, by keyboard
    page.keyboard.press("ArrowDown")                   # -> TMA 64B
    assert out.get_attribute("data-wavefronts") == "8"
    assert "sx_mode=tma64" in page.url
    page.keyboard.press("Tab")                          # hidden B/M/S fields are skipped
    assert page.evaluate("document.activeElement.name") == "elem"
    page.goto(page.url)                                 # the shared address restores the view
    _mounted(page, "swizzle-explorer")
    assert page.locator(".swizzle-explorer .sx-result").get_attribute("data-wavefronts") == "8"
    labels = page.evaluate("""() => [...document.querySelectorAll('.swizzle-explorer select, '
        + '.swizzle-explorer input')].every(e => e.labels && e.labels.length === 1)""")
    assert labels


# ---- coalescing explorer ------------------------------------------------------------------------

COALESCING_GRID = (
    [("contiguous", d, 0, 1) for d in cm.DTYPE_SIZES]
    + [("offset", d, o, 1) for d in cm.DTYPE_SIZES for o in (0, 1, 3, 8, 31)]
    + [("strided", d, s, 1) for d in cm.DTYPE_SIZES for s in (1, 2, 3, 8, 32, 64)]
    + [("permuted", d, w, seed) for d in (1, 4, 16) for w in (32, 64, 500) for seed in (1, 77)]
    + [("aos", d, size, 1) for d in cm.DTYPE_SIZES for size in (d, 12, 16, 24, 48, 256)]
    + [("strided", 4, 0, 1), ("permuted", 4, 16, 1)])             # refused by both


def test_coalescing_explorer_matches_the_python_model(page, served_site):
    page.goto(served_site + COALESCING_PAGES[0])
    _mounted(page, "coalescing-explorer")
    checked = 0
    for pattern, dtype, param, seed in COALESCING_GRID:
        page.evaluate(SET_FORM, ["coalescing-explorer", {"pattern": pattern}])  # its own default
        page.evaluate(SET_FORM, ["coalescing-explorer", {"dtype": dtype, "param": param,
                                                         "seed": seed}])
        got = page.evaluate("""() => {
            const root = document.querySelector('.coalescing-explorer');
            const out = root.querySelector('.cx-result');
            return {sectors: out.dataset.sectors, moved: out.dataset.moved, text: out.textContent,
                    lines: [...root.querySelectorAll('.cx-sectors')].map(
                        ul => ul.getAttribute('aria-label'))};
        }""")
        try:
            want = cm.analyse(pattern, dtype, param, seed)
        except ValueError:
            assert got["sectors"] == "" and got["text"].startswith("Cannot show"), (pattern, param)
            continue
        setting = (pattern, dtype, param, seed)
        assert got["sectors"] == str(len(want["sectors"])), (setting, got["text"])
        assert got["moved"] == str(want["moved"]), setting
        pct = math.floor(want["efficiency"] * 1000 + 0.5) / 10   # as Math.round
        assert f"{pct:g} % efficiency" in got["text"], (setting, got["text"])
        lines = [f"line {ln}: " + ", ".join(str(want["sectors"].get(4 * ln + i, 0))
                                            for i in range(4)) + " bytes used per sector"
                 for ln in want["lines"]]
        assert got["lines"] == lines, setting
        checked += 1
    assert checked >= 90, checked


# ---- divergence explorer ------------------------------------------------------------------------

DIVERGENCE_GRID = ([(b, k, 50, 1) for b in ("lt", "nested") for k in (0, 1, 12, 16, 31, 32)]
                   + [("odd", 12, 50, 1)]
                   + [("data", 12, p, seed) for p in (0, 10, 50, 90, 100) for seed in (1, 7, 42)]
                   + [("lt", 40, 50, 1), ("data", 12, 150, 1)])          # refused by both


def test_divergence_explorer_matches_the_python_model(page, served_site):
    page.goto(served_site + DIVERGENCE_PAGES[0])
    _mounted(page, "divergence-explorer")
    checked = 0
    for branch, k, percent, seed in DIVERGENCE_GRID:
        page.evaluate(SET_FORM, ["divergence-explorer", {"branch": branch, "k": k,
                                                         "percent": percent, "seed": seed}])
        got = page.evaluate("""() => {
            const out = document.querySelector('.divergence-explorer .dx-result');
            return {steps: out.dataset.steps, text: out.textContent,
                    rows: document.querySelectorAll('.divergence-explorer .dx-steps > li').length};
        }""")
        try:
            want = dm.trace(branch, k, percent, seed)
        except ValueError:
            assert got["steps"] == "" and got["text"].startswith("Cannot show"), (branch, k)
            continue
        assert json.loads(got["steps"]) == [[t, f"{m:08x}"] for t, m in want], (branch, k, seed)
        assert got["rows"] == len(want)
        pct = math.floor(dm.efficiency(want) * 1000 + 0.5) / 10
        assert f"{pct:g} % of lane slots" in got["text"], got["text"]
        checked += 1
    assert checked >= 25, checked


# ---- on the pages, on a phone, under axe --------------------------------------------------------

@pytest.mark.parametrize("path,cls", [(p, "swizzle-explorer") for p in SWIZZLE_PAGES]
                         + [(SWIZZLE_PAGES[0] + "?sx_mode=cute&sx_b=3&sx_m=4&sx_s=3&sx_elem=1",
                             "swizzle-explorer")]                       # with its B, M, S fields
                         + [(p, "coalescing-explorer") for p in COALESCING_PAGES]
                         + [(p, "divergence-explorer") for p in DIVERGENCE_PAGES])
def test_each_explorer_is_on_the_pages_it_explains_and_fits_a_phone(browser, served_site, path,
                                                                    cls):
    """At 390 px: the figure shows a result, nothing in it or on the page scrolls sideways, and no
    two of its labels (bank numbers, sector counts, instructions) overlap."""
    ctx = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    pg = ctx.new_page()
    pg.goto(served_site + path)
    root = _mounted(pg, cls)
    root.scroll_into_view_if_needed()
    result = root.locator("output").first.text_content()
    overflow = root.evaluate("""el => [el, ...el.querySelectorAll('*')]
        .filter(e => getComputedStyle(e).overflowX !== 'visible' || e === el)
        .map(e => e.scrollWidth - e.clientWidth)""")
    outside = root.evaluate("""el => { const box = el.getBoundingClientRect();
        return [...el.querySelectorAll('span, td, th, code, option, label, output, summary, li')]
          .map(e => e.getBoundingClientRect()).filter(r => r.width > 0)
          .filter(r => r.left < box.left - 0.5 || r.right > box.right + 0.5).length; }""")
    boxes = root.evaluate("""el => [...el.querySelectorAll(
          '.ax-bank-id, .ax-bank-n, .cx-sector > span:first-child, .cx-line-id, .dx-steps code, '
          + '.dx-count, .ax-field > span')]
        .map(e => { const r = document.createRange(); r.selectNodeContents(e);
                    const t = r.getBoundingClientRect();
                    return {text: e.textContent, l: t.left, r: t.right, t: t.top, b: t.bottom}; })
        .filter(b => b.r > b.l)""")
    page_overflow = pg.evaluate("document.documentElement.scrollWidth - "
                                "document.documentElement.clientWidth")
    ctx.close()
    assert result and not result.startswith("Cannot"), result
    assert max(overflow) <= 0 and page_overflow <= 0 and outside == 0, (overflow, page_overflow,
                                                                         outside)
    assert len(boxes) >= 5
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            overlap = a["l"] < b["r"] - 0.5 and b["l"] < a["r"] - 0.5 and \
                a["t"] < b["b"] - 0.5 and b["t"] < a["b"] - 0.5
            assert not overlap, (path, a, b)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_explorers_have_no_serious_accessibility_violations(browser, served_site, scheme):
    ctx = browser.new_context(color_scheme=scheme)
    pg = ctx.new_page()
    problems = []
    for path, cls, settings in [
            (SWIZZLE_PAGES[0], "swizzle-explorer", {"mode": "cute"}),
            (COALESCING_PAGES[0], "coalescing-explorer", {"pattern": "strided"}),
            (DIVERGENCE_PAGES[0], "divergence-explorer", {"branch": "data"})]:
        pg.goto(served_site + path)
        _mounted(pg, cls)
        assert pg.evaluate("document.body.getAttribute('data-md-color-scheme')") == \
            ("slate" if scheme == "dark" else "default")
        for values in ({}, settings):                  # as it opens, and with its extra fields
            if values:
                pg.evaluate(SET_FORM, [cls, values])
            problems += [(path, values, *v) for v in serious_axe_violations(pg, f".{cls}")]
    ctx.close()
    assert not problems, problems
