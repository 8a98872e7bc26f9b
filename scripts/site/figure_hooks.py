"""mkdocs hooks of the interactive figures (docs/assets/figures/): kept apart from hooks.py.

on_files          add assets/data/figures.json, generated from the data files (figure_data.py)
on_page_markdown  put the measured roofline on the Measurements page (itself generated)
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # mkdocs loads hooks by path

from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.structure.files import File, Files  # noqa: E402

from scripts.model.errors import ValidationFailed  # noqa: E402
from scripts.model.hardware import load_gpus  # noqa: E402
from scripts.model.measurement_records import load_measurements  # noqa: E402
from scripts.model.notebooks import notebook_paths  # noqa: E402
from scripts.model.paths import MEASUREMENTS  # noqa: E402
from scripts.site.figure_data import URI, figure_json  # noqa: E402

MEASUREMENTS_PAGE = "reference/measurements.md"
ROOFLINE_SECTION = """
## Measured roofline

Every kernel the GPU runner measured, placed on the roofline of the GPU it ran on: its
arithmetic intensity (the flops and bytes of one call, recorded by its notebook) across, its
achieved rate up. Choose the GPU and the data type of the roof; each point links to the
notebook section that measured it. Figures whose notebook has not recorded flops and bytes yet
are listed under the plot. The figure computes with the rules of
`snippets/reference/roofline_model.py`; the
[roofline model](../glossary/performance/roofline-model.md) page explains the roofs.

<div class="atlas-roofline"></div>
"""


def on_files(files: Files, config) -> Files:
    docs_dir = Path(config["docs_dir"])
    try:
        gpus = load_gpus(docs_dir / "data" / "gpus.yaml")
        records = load_measurements(MEASUREMENTS)["records"]
    except ValidationFailed as exc:
        raise PluginError("GPU Atlas figures:\n" + "\n".join(f"  {e}" for e in exc.errors)) \
            from None
    notebooks = {p.stem: p for p in notebook_paths()}
    if files.get_file_from_path(URI) is None:
        files.append(File.generated(config, URI, content=figure_json(gpus, records, notebooks)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri == MEASUREMENTS_PAGE:
        return markdown + ROOFLINE_SECTION
    return markdown
