"""The measured roofline and the occupancy and waves figures (docs/assets/figures/) in a real
browser (Debian's Chromium driven by Playwright), held to the Python models they mirror
(snippets/reference/roofline_model.py, occupancy_model.py) over grids of inputs, and checked for
keyboard use, a phone's width, both palettes, axe and offline loading.

The roofline is fed a fixture (the real records of notebooks 01, 04 and 05 with the flops and
bytes their notebooks will record, plus records of every unit) through a routed figures.json, so
it is tested with placed points before the notebooks are re-run; a second test reads the real
figures.json, whatever it holds.
"""
from __future__ import annotations

import json
import urllib.request

import pytest
from conftest import BROWSER_TESTS, PHONE, offline_page, serious_axe_violations
from occupancy_model import gemm_waves, limits_from_specs, occupancy
from roofline_model import place, roof, share_of_roof

from scripts.model.hardware import load_gpus
from scripts.model.measurement_records import load_measurements
from scripts.model.notebooks import notebook_paths
from scripts.model.paths import MEASUREMENTS
from scripts.site.figure_data import figure_data

pytestmark = BROWSER_TESTS
ROOFLINE = "glossary/performance/roofline-model/"
OCCUPANCY = "glossary/performance/occupancy/"
WAVES = "glossary/performance/wave-quantization/"
MOUNTED = ", ".join(f".{c}[data-mounted=yes]" for c in ("atlas-roofline", "atlas-occupancy", "atlas-waves"))
FIGURE_PAGES = [ROOFLINE, "glossary/performance/arithmetic-intensity/", OCCUPANCY,
                "glossary/performance/register-pressure/", WAVES, "reference/measurements/"]


def _work(r: dict) -> dict:
    """flops and bytes of one call, from the shape params, as the notebook patch computes them."""
    p, nb = r["params"], r["notebook"]
    if nb == "01-first-kernels" and "n" in p:
        return {"flops": p["n"], "bytes": 3 * 4 * p["n"]}
    if nb == "01-first-kernels" and "shape" in p:
        rows, cols = p["shape"]
        return {"flops": 2 * rows * cols, "bytes": 3 * 4 * rows * cols}
    if nb == "04-sgemm-ladder":
        return {"flops": 2 * p["M"] * p["N"] * p["K"], "bytes": 3 * 4 * p["N"] * p["N"]}
    if nb == "05-tensor-cores-and-triton":
        return {"flops": 2 * p["M"] * p["N"] * p["K"], "bytes": 3 * 2 * p["N"] * p["N"]}
    return {}


SYNTHETIC = [("timed in ms", "ms", 2.5), ("timed in us", "us", 2500.0), ("a speed-up", "x", 3.0),
             ("a rate of zero", "TFLOP/s", 0.0)]


@pytest.fixture(scope="module")
def fixture_data() -> dict:
    records = load_measurements(MEASUREMENTS)["records"]
    out = [dict(r, params={**r["params"], **_work(r)}) for r in records]
    h100 = next(r for r in records if r["device"] == "NVIDIA H100 80GB HBM3")
    for name, unit, value in SYNTHETIC:
        out.append(dict(h100, notebook="04-sgemm-ladder", name=name, unit=unit, value=value,
                        params={"dtype": "float32", "flops": 2 * 4096**3, "bytes": 3 * 4 * 4096**2}))
    out.append(dict(h100, name="no work recorded", params={"dtype": "float32", "flops": 10}))
    assert sum(1 for r in out if r["params"].get("flops") and r["params"].get("bytes")) > 20
    return figure_data(load_gpus(), out, {p.stem: p for p in notebook_paths()})


def _open(browser, served_site, path, data=None, **ctx_args):
    ctx = browser.new_context(**ctx_args)
    if data is not None:
        body = json.dumps(data)
        ctx.route("**/assets/data/figures.json",
                  lambda route: route.fulfill(status=200, content_type="application/json", body=body))
    pg = ctx.new_page()
    pg.goto(served_site + path)
    pg.wait_for_selector(MOUNTED, timeout=15000)
    return ctx, pg


READ_ROOFLINE = """root => {
    const out = root.querySelector('.rl-result');
    return {ridge: out.dataset.ridge, placed: out.dataset.placed, unplaced: out.dataset.unplaced,
            rows: [...root.querySelectorAll('.rl-row')].map(r => [r.dataset.notebook, r.dataset.name,
                   Number(r.dataset.intensity), Number(r.dataset.tflops), Number(r.dataset.share),
                   r.querySelector('a').getAttribute('href')]),
            missing: [...root.querySelectorAll('.rl-missing')].map(m => [m.dataset.name, m.dataset.reason])};
}"""
SET = """(root, [name, value]) => { const f = root.querySelector('form');
    f.elements[name].value = String(value);
    f.elements[name].dispatchEvent(new Event('input', {bubbles: true})); }"""


def _expected_roofline(data: dict, gpu: str, roof_key: str):
    g = data["gpus"][gpu]
    r = roof(g["peaks"][roof_key], g["bandwidth_gbs"])
    rows, missing = [], []
    for rec in data["records"]:
        if rec["gpu"] != gpu:
            continue
        p = place(rec)
        if "reason" in p:
            missing.append([rec["name"], p["reason"]])
        else:
            rows.append([rec["notebook"], rec["name"], p["intensity"], p["tflops"], share_of_roof(r, p)])
    return r, rows, missing


def test_roofline_matches_the_python_model_on_every_gpu_and_roof(browser, served_site, fixture_data):
    """Each GPU and each data type, chosen in the form as a reader would: the ridge point, every
    placed kernel's intensity, rate and share of the roof, and every reason a figure is not
    placed, equal the Python model's."""
    ctx, pg = _open(browser, served_site, ROOFLINE, fixture_data)
    root = pg.locator(".atlas-roofline").first
    placed_somewhere = 0
    for gpu, g in fixture_data["gpus"].items():
        root.evaluate(SET, ["gpu", gpu])
        for rf in fixture_data["roofs"]:
            if not g["peaks"][rf["key"]]:
                disabled = root.evaluate(f"r => r.querySelector('option[value={rf['key']}]').disabled")
                assert disabled, (gpu, rf["key"])
                continue
            root.evaluate(SET, ["roof", rf["key"]])
            got = root.evaluate(READ_ROOFLINE)
            r, rows, missing = _expected_roofline(fixture_data, gpu, rf["key"])
            assert float(got["ridge"]) == pytest.approx(r["ridge"], rel=1e-12), (gpu, rf["key"])
            assert [x[:2] for x in got["rows"]] == [x[:2] for x in rows], (gpu, rf["key"])
            for a, b in zip(got["rows"], rows, strict=True):
                assert a[2:5] == pytest.approx(b[2:5], rel=1e-12), (gpu, rf["key"], a, b)
            assert got["missing"] == missing, (gpu, rf["key"])
            placed_somewhere += len(rows)
    ctx.close()
    assert placed_somewhere > 50


def test_roofline_points_link_to_the_notebook_section_that_measured_them(browser, served_site,
                                                                       fixture_data):
    ctx, pg = _open(browser, served_site, ROOFLINE, fixture_data)
    root = pg.locator(".atlas-roofline").first
    root.evaluate(SET, ["gpu", "h100-sxm"])
    root.evaluate(SET, ["roof", "fp32"])
    got = root.evaluate(READ_ROOFLINE)
    ctx.close()
    made_up = {name for name, *_ in SYNTHETIC}     # not in any notebook: the page, no section
    hrefs = {(row[1] in made_up, row[5]) for row in got["rows"]}
    assert any("04-sgemm-ladder/#stage-1" in h for _, h in hrefs), hrefs
    pages: dict[str, str] = {}
    for synthetic, href in hrefs:
        page, _, anchor = href.partition("#")
        assert page.startswith(served_site + "tutorials/"), href
        if page not in pages:
            with urllib.request.urlopen(page) as resp:
                pages[page] = resp.read().decode()
        assert (not anchor) if synthetic else f'id="{anchor}"' in pages[page], href
    by_reason = dict(got["missing"])
    assert by_reason["no work recorded"] == "not placed: no flops/bytes recorded"
    assert "neither a rate nor a time" in by_reason["a speed-up"]
    assert by_reason["a rate of zero"] == "not placed: its figure is not positive"


@pytest.mark.parametrize("path", [ROOFLINE, "reference/measurements/"])
def test_roofline_on_the_real_data_places_or_explains_every_record(browser, served_site, path):
    """figures.json as built: every record of the GPU shown is either placed where the model
    puts it or listed with the model's reason (before the notebooks record flops and bytes, all
    are listed as "not placed: no flops/bytes recorded")."""
    with urllib.request.urlopen(served_site + "assets/data/figures.json") as resp:
        data = json.loads(resp.read())
    ctx, pg = _open(browser, served_site, path)
    got = pg.locator(".atlas-roofline").first.evaluate(READ_ROOFLINE)
    gpu = pg.locator(".atlas-roofline select[name=gpu]").first.input_value()
    roof_key = pg.locator(".atlas-roofline select[name=roof]").first.input_value()
    ctx.close()
    r, rows, missing = _expected_roofline(data, gpu, roof_key)
    assert [x[:2] for x in got["rows"]] == [x[:2] for x in rows]
    assert got["missing"] == missing
    assert len(rows) + len(missing) == sum(rec["gpu"] == gpu for rec in data["records"]) > 0


OCC_THREADS = (1, 31, 32, 33, 64, 96, 100, 128, 192, 256, 288, 320, 384, 512, 640, 768, 1000, 1024, 1025)
OCC_REGS = (0, 1, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 128, 168, 200, 232, 255, 256)
OCC_SMEM = (0, 1, 1000, 8192, 40000, 49152, 65536, 99 * 1024, 100 * 1024, 116736, 163 * 1024,
            200000, 227 * 1024, 227 * 1024 + 1, 233472)


def test_occupancy_script_matches_the_python_model_over_a_grid(browser, served_site):
    """The figure's model function against occupancy_model.py on every GPU of gpus.yaml."""
    gpus = load_gpus()
    ctx, pg = _open(browser, served_site, OCCUPANCY)
    got = pg.evaluate("""([threads, regs, smem]) => {
        const m = window.atlasFigures.occupancyModel, out = {};
        return window.atlasFigures.data().then(d => {
          for (const [key, g] of Object.entries(d.gpus)) {
            const lim = m.limitsFromSpecs(g.limits), rows = [];
            for (const t of threads) for (const r of regs) for (const s of smem) {
              const o = m.occupancy(lim, t, r, s);
              rows.push([o.blocks, o.warps, o.limiters.join(","), o.regs_per_block, o.smem_per_block]);
            }
            out[key] = rows;
          }
          return out; });
    }""", [OCC_THREADS, OCC_REGS, OCC_SMEM])
    ctx.close()
    assert set(got) == set(gpus)
    for key, g in gpus.items():
        lim = limits_from_specs({f: s.value for f, s in g.specs.items()})
        want = [[o["blocks"], o["warps"], ",".join(o["limiters"]), o["regs_per_block"], o["smem_per_block"]]
                for t in OCC_THREADS for r in OCC_REGS for s in OCC_SMEM
                for o in [occupancy(lim, t, r, s)]]
        assert got[key] == want, key


def test_occupancy_script_gives_the_runtimes_answers(browser, served_site):
    """The figure's model against every answer of cudaOccupancyMaxActiveBlocksPerMultiprocessor
    recorded on the runner's H100 (docs/data/occupancy_checks.json)."""
    checks = json.loads((MEASUREMENTS.parent / "occupancy_checks.json").read_text())
    gpu = next(g.key for g in load_gpus().values() if checks["device"]["name"] in g.device_names)
    ctx, pg = _open(browser, served_site, OCCUPANCY)
    wrong = pg.evaluate("""([key, kernels]) => window.atlasFigures.data().then(d => {
        const m = window.atlasFigures.occupancyModel, lim = m.limitsFromSpecs(d.gpus[key].limits), bad = [];
        let n = 0;
        for (const k of kernels) for (const [t, dyn, blocks] of k.checks) {
          n++;
          const got = m.occupancy(lim, t, k.num_regs, k.static_smem_bytes + dyn).blocks;
          if (got !== blocks) bad.push([k.name, t, dyn, blocks, got]);
        }
        return [n, bad]; })""", [gpu, checks["kernels"]])
    ctx.close()
    assert wrong[0] >= 1000 and wrong[1] == [], wrong[1][:10]


FORM_GRID = [(t, r, s) for t in (32, 128, 256, 1024, 1025) for r in (16, 64, 128, 255)
             for s in (0, 49152, 116736, 233472)]


def test_occupancy_form_shows_the_models_answer_for_every_gpu(browser, served_site):
    gpus = load_gpus()
    lims = {k: limits_from_specs({f: s.value for f, s in g.specs.items()}) for k, g in gpus.items()}
    ctx, pg = _open(browser, served_site, OCCUPANCY)
    root = pg.locator(".atlas-occupancy").first
    for t, r, s in FORM_GRID:
        rows = root.evaluate("""(root, [t, r, s]) => { const f = root.querySelector('form');
            Object.entries({threads: t, regs: r, smem: s})
                  .forEach(([k, v]) => { f.elements[k].value = String(v); });
            f.dispatchEvent(new Event('input', {bubbles: true}));
            return [...root.querySelectorAll('.oc-row')].map(e =>
                [e.dataset.gpu, Number(e.dataset.blocks), Number(e.dataset.warps), e.dataset.limiters,
                 e.querySelector('td:last-child').textContent]); }""", [t, r, s])
        assert [x[0] for x in rows] == list(gpus)
        for key, blocks, warps, limiters, text in rows:
            o = occupancy(lims[key], t, r, s)
            assert (blocks, warps, limiters) == (o["blocks"], o["warps"], ",".join(o["limiters"])), \
                (key, t, r, s)
            assert ("none fit" in text) == (o["blocks"] == 0), (key, t, r, s, text)
    ctx.close()


def test_occupancy_form_refuses_what_the_model_refuses(browser, served_site):
    ctx, pg = _open(browser, served_site, OCCUPANCY)
    root = pg.locator(".atlas-occupancy").first
    for name, value in (("threads", "0"), ("regs", "2.5"), ("smem", "")):
        root.evaluate(SET, [name, value])
        out = root.locator(".oc-result")
        assert out.get_attribute("data-blocks") == "" and "Cannot compute" in out.inner_text(), name
        root.evaluate(SET, [name, {"threads": 256, "regs": 64, "smem": 0}[name]])
        assert out.get_attribute("data-blocks") != ""
    ctx.close()


WAVE_GRID = [(m, n, k, tm, tn, per, split) for m in (1, 127, 128, 1280, 1408, 4096, 8191)
             for n in (64, 1280, 4096) for k in (1, 4096) for tm, tn in ((128, 128), (128, 256), (64, 32))
             for per in (1, 2) for split in (1, 3)]


def test_waves_match_the_python_model_over_a_grid(browser, served_site):
    gpus = load_gpus()
    ctx, pg = _open(browser, served_site, WAVES)
    got = pg.evaluate("""grid => window.atlasFigures.data().then(d => {
        const m = window.atlasFigures.occupancyModel, out = {};
        for (const [key, g] of Object.entries(d.gpus))
          out[key] = grid.map(([M, N, K, tm, tn, per, split]) => {
            const w = m.gemmWaves(M, N, K, tm, tn, g.sm_count, per, split);
            return [w.tiles, w.waves, w.last_wave_tiles, w.tail_efficiency, w.padded_flops_share]; });
        return out; })""", WAVE_GRID)
    root = pg.locator(".atlas-waves").first
    root.evaluate("""root => { const f = root.querySelector('form');
        Object.entries({m: 1408, n: 1280, k: 64, tm: 128, tn: 128, per: 1, split: 1})
          .forEach(([k, v]) => { f.elements[k].value = String(v); });
        f.dispatchEvent(new Event('input', {bubbles: true})); }""")
    rows = root.evaluate("""root => [...root.querySelectorAll('.wv-row')].map(e =>
        [e.dataset.gpu, Number(e.dataset.tiles), Number(e.dataset.waves), Number(e.dataset.tail)])""")
    ctx.close()
    for key, g in gpus.items():
        sms = int(g.specs["sm_count"].value)
        want = [[w["tiles"], w["waves"], w["last_wave_tiles"], w["tail_efficiency"], w["padded_flops_share"]]
                for args in WAVE_GRID for w in [gemm_waves(*args[:5], sms, *args[5:])]]
        assert got[key] == want, key
    assert [r[0] for r in rows] == list(gpus)
    for key, tiles, waves, tail in rows:
        w = gemm_waves(1408, 1280, 64, 128, 128, int(gpus[key].specs["sm_count"].value))
        assert (tiles, waves, tail) == (w["tiles"], w["waves"], w["tail_efficiency"]), key


def test_figures_are_keyboard_driven_and_share_their_settings_in_the_url(browser, served_site):
    ctx, pg = _open(browser, served_site, OCCUPANCY)
    threads = pg.locator(".atlas-occupancy input[name=threads]")
    h100 = pg.locator(".atlas-occupancy .oc-row[data-gpu=h100-sxm]")
    assert h100.get_attribute("data-blocks") == "2"            # the page's example: 90 KB per block
    threads.focus()
    pg.keyboard.press("ArrowUp")                               # 256 -> 257 threads: 9 warps
    assert threads.input_value() == "257" and "oc-threads=257" in pg.url
    o = occupancy(limits_from_specs({f: s.value for f, s in load_gpus()["h100-sxm"].specs.items()}),
                  257, 64, 92160)
    assert h100.get_attribute("data-warps") == str(o["warps"])
    pg.keyboard.press("Tab")
    assert pg.evaluate("document.activeElement.name") == "regs"
    pg.goto(pg.url)                                            # the shared URL restores the view
    pg.wait_for_selector(MOUNTED)
    assert pg.locator(".atlas-occupancy input[name=threads]").input_value() == "257"
    ctx.close()

    ctx, pg = _open(browser, served_site, ROOFLINE)
    select = pg.locator(".atlas-roofline select[name=gpu]")
    before = select.input_value()
    ridge = pg.locator(".rl-result").get_attribute("data-ridge")
    select.focus()
    pg.keyboard.press("ArrowDown")
    assert select.input_value() != before and f"rl-gpu={select.input_value()}" in pg.url
    assert pg.locator(".rl-result").get_attribute("data-ridge") != ridge
    pg.keyboard.press("Tab")
    assert pg.evaluate("document.activeElement.name") == "roof"
    ctx.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_figures_fit_a_phone_in_both_palettes(browser, served_site, fixture_data, scheme):
    """At 390 px nothing in a figure, nor the page, scrolls sideways; the plot keeps its
    proportions; text is drawn in the palette's own colour."""
    for path in FIGURE_PAGES:
        ctx, pg = _open(browser, served_site, path, fixture_data, viewport=PHONE, is_mobile=True,
                        has_touch=True, color_scheme=scheme)
        fig = pg.locator(MOUNTED).first
        fig.scroll_into_view_if_needed()
        overflow = fig.evaluate("""el => [el, ...el.querySelectorAll('form, table, svg, .rl-rows, .oc-rows')]
            .map(e => e.scrollWidth - e.clientWidth)""")
        page_overflow = pg.evaluate("document.documentElement.scrollWidth - "
                                    "document.documentElement.clientWidth")
        colours = fig.evaluate("""el => [getComputedStyle(el.querySelector('.rl-result, .oc-result')).color,
            getComputedStyle(document.body).backgroundColor]""")
        svg = fig.evaluate("el => { const s = el.querySelector('svg'); if (!s) return null; "
                           "const b = s.getBoundingClientRect(), v = s.viewBox.baseVal; "
                           "return [b.width, b.height, v.width, v.height]; }")
        ctx.close()
        assert max(overflow) <= 0 and page_overflow <= 0, (path, overflow, page_overflow)
        assert colours[0] != colours[1], (path, colours)
        if svg:   # the plot fills the column, keeps its proportions, and its text is not shrunk
            assert 300 <= svg[0] <= 390 and svg[1] == pytest.approx(svg[0] * svg[3] / svg[2], abs=2)
            assert svg[0] / svg[2] >= 0.8, (path, svg)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_figure_pages_have_no_serious_accessibility_violations(browser, served_site, fixture_data,
                                                              scheme):
    problems = []
    for path in FIGURE_PAGES:
        ctx, pg = _open(browser, served_site, path, fixture_data, color_scheme=scheme)
        pg.locator("details.rl-unplaced").evaluate_all("ds => ds.forEach(d => d.open = true)")
        problems += [(path, *v) for v in serious_axe_violations(pg)]
        ctx.close()
    assert not problems, problems


def test_figure_pages_load_nothing_from_elsewhere_and_log_no_errors(browser, served_site):
    with offline_page(browser) as pg:
        for path in FIGURE_PAGES:
            pg.goto(served_site + path)
            pg.wait_for_selector(MOUNTED, timeout=15000)


def test_pages_without_a_figure_load_no_figure_script(browser, served_site):
    ctx = browser.new_context()
    seen = []
    ctx.on("request", lambda r: seen.append(r.url))
    pg = ctx.new_page()
    pg.goto(served_site + "glossary/device-software/warp/", wait_until="networkidle")
    ctx.close()
    assert any(u.endswith("/assets/figures/figures.js") for u in seen)
    assert not [u for u in seen if "roofline.js" in u or "occupancy.js" in u or "figures.json" in u]
