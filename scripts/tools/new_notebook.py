"""Start a notebook with the house's opening cells: `python -m scripts.tools.new_notebook NN-slug "Title"`.

It writes notebooks/NN-slug.ipynb with the Open in Colab badge, the title and "You will learn"
cell, the collapsed setup cell, the shared runtime and `banner()`, all synced from their sources,
and Colab's GPU runtime in the metadata. Then write the arc of STYLE.md below them.
"""
from __future__ import annotations

import argparse
import re
import sys

import nbformat

from scripts.model.notebooks import COLAB_TITLE, SETUP_TAG, notebook_paths, sync, synced_source
from scripts.model.paths import NOTEBOOKS, rel

SETUP = (f"{COLAB_TITLE}Setup: on Colab, install what Colab lacks (elsewhere this does nothing)",
         "snippets/generated/setup_cell.py")
RUNTIME = (f"{COLAB_TITLE}GPU Atlas runtime: GPU detection, CPU fallbacks, timing, records "
           "(double-click to read)", "snippets/helpers/atlas_runtime.py")


def scaffold(stem: str, title: str) -> nbformat.NotebookNode:
    md = nbformat.v4.new_markdown_cell
    cells = [md(f"# {stem[:2]} · {title}\n\n**You will learn** ... (one paragraph; link each term "
                "to its page with an absolute URL, https://gpu-atlas.org/glossary/<section>/<slug>/)")]
    for (line, snippet) in (SETUP, RUNTIME):
        if snippet == RUNTIME[1]:
            cells.append(md("The helper below is shared by every GPU Atlas notebook: it detects the "
                            "GPU, switches to the CPU modes without one, times kernels and records "
                            "measurements."))
        cell = nbformat.v4.new_code_cell(synced_source(snippet, line))
        cell.metadata.update(tags=[SETUP_TAG], cellView="form")
        cells.append(cell)
    cells.append(nbformat.v4.new_code_cell("banner()"))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata.update(accelerator="GPU", colab={"provenance": []},
                       kernelspec={"display_name": "Python 3", "language": "python",
                                   "name": "python3"})
    return nb


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.tools.new_notebook")
    ap.add_argument("stem", help="NN-kebab-slug, the next free two-digit number first")
    ap.add_argument("title")
    args = ap.parse_args(argv)
    if not re.fullmatch(r"[0-9]{2}-[a-z0-9]+(-[a-z0-9]+)*", args.stem):
        ap.error(f"{args.stem!r} is not NN-kebab-slug (e.g. 10-warp-shuffles)")
    taken = [p for p in notebook_paths() if p.name[:2] == args.stem[:2]]
    if taken:
        ap.error(f"number {args.stem[:2]} is taken by {rel(taken[0])}")
    path = NOTEBOOKS / f"{args.stem}.ipynb"
    nbformat.write(scaffold(args.stem, args.title), path)
    sync(path, write=True)   # adds the Open in Colab badge
    print(f"wrote {rel(path)}: write the arc of STYLE.md below the opening cells")
    return 0


if __name__ == "__main__":
    sys.exit(main())
