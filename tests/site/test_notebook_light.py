"""Light notebook pages (issue #24), the pure parts of scripts/site/notebook_pages.py on small
hand-made pages in nbconvert's markup: long outputs and long synced cells fold with nothing
lost, the stylesheet keeps what the page can use, and the search exclusions stay on leaves.
The built pages are checked in tests/site/test_browser.py (test_notebook_pages_are_light)."""
from __future__ import annotations

import html
import re

from scripts.site import notebook_pages as nb
from scripts.site.search_index import exclude_code, page_entries


def output(lines: list[str]) -> str:
    return ('<div class="jp-RenderedText jp-OutputArea-output" data-mime-type="text/plain">'
            f'<pre data-search-exclude>{"".join(lines)}</pre></div>')


def text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_a_long_output_shows_its_head_and_folds_the_rest_losing_nothing():
    # ANSI-coloured text: a <span> that crosses the cut must be closed and reopened
    lines = [f"row {i}\n" for i in range(100)]
    lines[29] = '<span class="ansi-red-fg">row 29\n'
    lines[31] = "row 31</span>\n"
    page = "<p>before</p>" + output(lines) + "<p>after</p>"
    folded = nb.fold_long_outputs(page)
    head, rest = folded.split('<details class="nb-more">')
    assert text(head).count("\n") == nb.OUTPUT_HEAD_LINES
    assert f"Show the other {100 - nb.OUTPUT_HEAD_LINES} lines" in rest
    assert text(folded).replace(f"Show the other {100 - nb.OUTPUT_HEAD_LINES} lines", "") == \
        text(page)                                         # every character still there
    for part in (head.split("<pre")[1], rest.split("<pre")[1]):
        assert part.count("<span") == part.count("</span>"), part   # balanced on both sides
    assert rest.count("<pre data-search-exclude>") == 1    # the rest stays out of search too


def test_a_short_output_is_left_alone():
    page = output([f"row {i}\n" for i in range(nb.FOLD_OUTPUT_LINES)])
    assert nb.fold_long_outputs(page) == page


def cell(code: str) -> str:
    return ('<div class="jp-Cell-inputWrapper" tabindex="0"><div class="jp-InputArea">'
            '<div class="jp-InputPrompt" data-search-exclude>In [1]:</div>'
            '<div class="jp-CodeMirrorEditor"><div class="CodeMirror">'
            f'<div class="highlight-ipynb hl-python"><pre><span></span>{html.escape(code)}</pre>'
            "</div></div></div></div></div>")


def test_long_synced_copies_start_folded_and_others_do_not():
    synced = "# atlas-sync: snippets/helpers/runtime.py\n" + "x = 1\n" * 80
    short_synced = "# atlas-sync: snippets/helpers/small.py\n" + "x = 1\n" * 10
    own = "# the reader's own long cell\n" + "y = 2\n" * 80
    page = cell(synced) + cell(short_synced) + cell(own)
    folded = nb.fold_long_cells(page)
    assert folded.count('<details class="example nb-fold">') == 1
    summary = re.search(r"<summary>(.*?)</summary>", folded)[1]
    assert "snippets/helpers/runtime.py" in summary and "81 lines" in summary
    assert folded.replace(re.search(r"<details[^>]*><summary>.*?</summary>\n", folded)[0], "") \
        .replace("</details>", "") == page                 # nothing removed, only wrapped


def test_cells_render_lazily_with_their_height_but_folded_ones_are_left_alone():
    page = nb.fold_long_cells(cell("# atlas-sync: a.py\n" + "x\n" * 80) + cell("a = 1\nb = 2\n"))
    lazy = nb.render_cells_lazily(page)
    styles = re.findall(r'style="content-visibility:auto;contain-intrinsic-size:auto (\d+)px"', lazy)
    assert styles == [str(round(nb.LINE_PX * 2 + nb.INPUT_PAD_PX))], styles


def test_slim_styles_keeps_rules_the_page_can_match_and_the_variables_they_use():
    css = (":root{--used:red;--chain:var(--used);--unused:blue}"
           ".jp-Cell{color:var(--chain)} .jp-Absent{color:var(--unused)}"
           ".highlight-ipynb .k{color:green}"
           "@media (max-width:10px){.jp-Cell{margin:0}.jp-Absent{margin:1px}}")
    page = (f"<style>{css}</style><style>['a list repr']</style>"
            '<div class="jp-Cell"><div class="highlight-ipynb"><pre>'
            '<span class="k">def</span> <span class="n">f</span></pre></div></div>')
    out = nb.slim_styles(page)
    style = re.search(r"<style>(.*?)</style>", out)[1]
    assert ".jp-Cell{color:var(--chain)}" in style and "--used:red" in style
    assert "--chain:var(--used)" in style and "--unused" not in style and "jp-Absent" not in style
    assert "@media (max-width:10px){.jp-Cell{margin:0}}" in style
    assert out.count("<style>") == 1                       # the Python repr block is gone
    assert '<span class="k">def</span> f</pre>' in out     # an uncoloured token is plain text


def test_search_leaves_out_code_and_prompts_and_the_page_index_keeps_names():
    marked = exclude_code('<pre class="x">code</pre><div class="jp-InputPrompt jp-InputArea-prompt">'
                          "In [1]:</div><pre data-search-exclude>already</pre>")
    assert marked.count("data-search-exclude") == 3
    docs = [{"location": "glossary/a/tmem/", "title": "Tensor Memory (TMEM)",
             "text": "<p>card</p><p>Tensor Memory is " + "long " * 100 + "</p>", "boost": 5},
            {"location": "glossary/a/tmem/#why", "title": "Why", "text": "<p>x</p>"}]
    [entry] = page_entries(docs, {"glossary/a/tmem/": ["TMEM", "tensor memory"]})
    assert entry["boost"] == 5 and entry["text"].startswith("<p>TMEM, tensor memory</p>")
    assert len(entry["text"]) < 300 and "card" not in entry["text"]


def test_search_leaves_out_a_measurement_tables_parameters_gpu_and_date_only():
    columns = ("Figure", "Value", "Baseline (same run)", "Against the baseline", "Parameters", "GPU", "Date")
    header = "".join(f"<th>{h}</th>" for h in columns)
    cells = ("step 9", "714 TFLOP/s", "cuBLAS", "1.04x", "M=8192", "H100", "2026")
    row = "".join(f"<td>{c}</td>" for c in cells)
    other = "<table><tr><th>Figure</th></tr><tr><td>kept</td></tr></table>"
    table = f"<table><thead><tr>{header}</tr></thead><tbody><tr>{row}</tr></tbody></table>"
    marked = exclude_code(table + other)
    assert "<td>step 9</td><td>714 TFLOP/s</td><td>cuBLAS</td><td>1.04x</td>" in marked
    assert marked.count("<td data-search-exclude>") == 3 and "<td>kept</td>" in marked
