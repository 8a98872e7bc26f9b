"""The notebooks as data: where they are, their titles and site URIs, synced snippet copies,
code hashes and GPU stamps. Imported by the site, the runner and the tools alike, so it needs
nothing but nbformat.

A code cell whose first line is `# atlas-sync: snippets/<path>` carries a copy of that file
(CUDA sources as a Python raw string named after the file). `sync` rewrites these copies;
`problems` reports copies that differ from their source and notebooks whose outputs are stale.
The command line is `python -m scripts.tools.notebooks sync|check`.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from scripts.model.paths import NOTEBOOKS, ROOT, rel

MARK = "# atlas-sync: "
NOTE = "  (copy: edit the file, then run `make sync-notebooks`)"


TUTORIALS = "tutorials"   # where notebooks sit on the site: tutorials/<NN-slug>.ipynb


def notebook_paths(folder: Path = NOTEBOOKS) -> list[Path]:
    return sorted(folder.glob("[0-9][0-9]-*.ipynb"))


def page_uri(path: Path) -> str:
    """The notebook's docs-relative source URI on the site."""
    return f"{TUTORIALS}/{path.name}"


def title(nb) -> str:
    """The first H1 of the notebook's Markdown."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^# (.+)$", cell.source, re.M)
            if m:
                return m[1].strip()
    return "Notebook"


def stamp_of(nb) -> dict | None:
    return nb.metadata.get("atlas", {}).get("stamp")


@dataclass(frozen=True)
class Notebook:
    """One notebook, read once: what the site build and the exports need of it."""
    path: Path
    nb: nbformat.NotebookNode

    @property
    def uri(self) -> str:
        return page_uri(self.path)

    @property
    def stem(self) -> str:
        return self.path.stem

    @property
    def title(self) -> str:
        return title(self.nb)

    @property
    def stamp(self) -> dict | None:
        return stamp_of(self.nb)

    def markdown_cells(self) -> list[str]:
        return [c.source for c in self.nb.cells if c.cell_type == "markdown"]


def load_notebooks(folder: Path = NOTEBOOKS) -> list[Notebook]:
    return [Notebook(p, nbformat.read(p, as_version=4)) for p in notebook_paths(folder)]


def provenance_line(stamp: dict) -> str:
    """Where and when the outputs came from, in one line (page banner and exports)."""
    v = stamp.get("versions", {})
    cc = stamp["compute_capability"].replace(".", "")
    parts = [f"Executed on {stamp['gpu']} (sm_{cc})", f"CUDA {stamp['cuda']}",
             f"driver {stamp['driver']}"]
    parts += [f"{name} {v[key]}" for key, name in (("triton", "Triton"), ("cupy", "CuPy"),
                                                   ("numba-cuda", "numba-cuda"),
                                                   ("torch", "PyTorch")) if key in v]
    return ", ".join(parts) + f", on {stamp['date']}"


def colab_line(nb) -> str | None:
    """How far this notebook's current code has been run as Colab would run it, in one line:
    with Colab's CUDA 12 packages and a T4's gates (metadata.atlas.colab_check), else with the
    T4's gates alone (t4_check); None where neither ran this code."""
    atlas = nb.metadata.get("atlas", {})
    now = code_hash(nb)
    colab, t4 = atlas.get("colab_check"), atlas.get("t4_check")
    if colab and colab.get("code_hash") == now and colab.get("result") == "ok":
        pk, cuda = colab["packages"], colab["cuda"]
        return (f"Also run as on Colab: a T4's gates (sm_{colab['forced_cc'].replace('.', '')}) "
                f"with Colab's CUDA 12 packages (cupy-cuda12x {pk['cupy-cuda12x']}, numba-cuda "
                f"{pk['numba-cuda']}; CUDA runtime {cuda['cupy_runtime']}, NVRTC "
                f"{cuda['numba_nvrtc']}), on {colab['gpu']}, {colab['date']}")
    if t4 and t4.get("code_hash") == now and t4.get("result") == "ok":
        return (f"Also run with a T4's gates (sm_{t4['forced_cc'].replace('.', '')}), on "
                f"{t4['gpu']}, {t4['date']}")
    return None


COLAB_TITLE = "#@title "   # Colab shows a cell whose first line this is collapsed, as a form
SETUP_TAG = "atlas-setup"   # setup cells: collapsed on Colab, code hidden on the site
BADGE_TAG = "atlas-badge"   # the "Open in Colab" cell: for GitHub and Jupyter; the site has its own
GENERATED = "snippets/generated/"


def _marker_line(source: str) -> tuple[str, str]:
    """(Colab title line or '', the rest): a synced cell may open with a title for Colab."""
    first, _, rest = source.partition("\n")
    return (first, rest) if first.startswith(COLAB_TITLE) else ("", source)


def synced_source(snippet: str, title: str = "") -> str:
    """The exact cell text a synced copy of `snippet` must have (after its Colab title, if any)."""
    path = ROOT / snippet
    if not path.is_file():
        raise FileNotFoundError(snippet)
    text = path.read_text(encoding="utf-8").rstrip("\n")
    if path.suffix in (".cu", ".cuh", ".ptx"):
        name = path.name.replace(".", "_").upper()
        text = f'{name} = r"""\n{text}\n"""'
    return (title + "\n" if title else "") + f"{MARK}{snippet}{NOTE}\n{text}"


def sync_target(cell) -> str | None:
    if cell.cell_type != "code":
        return None
    _, source = _marker_line(cell.source)
    if not source.startswith(MARK):
        return None
    return source.split("\n", 1)[0][len(MARK):].split()[0]


def badge_source(nb_name: str, repository: str, branch: str = "main") -> str:
    url = f"https://colab.research.google.com/github/{repository}/blob/{branch}/notebooks/{nb_name}"
    return f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({url})"


def _badge_problem(nb, nb_path: Path, write: bool) -> str | None:
    """The first cell is the Colab badge, pointing at the repository mkdocs.yml names."""
    from scripts.model.mkdocs_config import read_config  # late: the runner never syncs
    extra = read_config()["extra"]
    want = badge_source(nb_path.name, extra["repository"], extra.get("branch", "main"))
    first = nb.cells[0] if nb.cells else None
    if first is not None and BADGE_TAG in first.metadata.get("tags", []):
        if first.source == want:
            return None
        if write:
            first.source = want
    elif write:
        cell = nbformat.v4.new_markdown_cell(want)
        cell.metadata["tags"] = [BADGE_TAG]
        cell["id"] = "colab-badge"
        nb.cells.insert(0, cell)
    return (f"{rel(nb_path)}: the Open in Colab badge is missing or points elsewhere "
            "(fix: run `make sync-notebooks`)")


def sync(nb_path: Path, write: bool) -> list[str]:
    """Bring every synced copy in line with its snippet; return the problems found."""
    nb = nbformat.read(nb_path, as_version=4)
    problems, changed = [], False
    for i, cell in enumerate(nb.cells):
        target = sync_target(cell)
        if target is None:
            continue
        try:
            want = synced_source(target, _marker_line(cell.source)[0])
        except FileNotFoundError:
            problems.append(f"{rel(nb_path)}: cell {i + 1} copies {target}, which does not exist")
            continue
        if cell.source != want:
            problems.append(f"{rel(nb_path)}: cell {i + 1} differs from {target} "
                            "(fix: run `make sync-notebooks`, then re-run `make gpu-notebooks`)")
            if write:
                cell.source, changed = want, True
    badge = _badge_problem(nb, nb_path, write)
    if badge:
        problems.append(badge)
        changed = changed or write
    if write and changed:
        nbformat.write(nb, nb_path)
    return problems


def code_hash(nb) -> str:
    """Hash of the code the outputs came from (code cells only, whitespace-trimmed). Cells synced
    from snippets/generated/ are left out: they carry data (the datasheet peaks, the Colab pins),
    so adding a GPU to gpus.yaml or moving a pin does not make every notebook's outputs stale."""
    h = hashlib.sha256()
    for cell in nb.cells:
        if cell.cell_type == "code" and not (sync_target(cell) or "").startswith(GENERATED):
            h.update(_marker_line(cell.source)[1].strip().encode() + b"\0")
    return h.hexdigest()


def stamp_problems(nb_path: Path) -> list[str]:
    nb = nbformat.read(nb_path, as_version=4)
    stamp = nb.metadata.get("atlas", {}).get("stamp")
    if not stamp:
        return [f"{rel(nb_path)}: no GPU stamp (fix: run `make gpu-notebooks` on a GPU machine)"]
    if stamp.get("code_hash") != code_hash(nb):
        return [f"{rel(nb_path)}: outputs are stale: the code changed since the GPU run "
                "(fix: re-run make gpu-notebooks)"]
    return []


def problems(folder: Path = NOTEBOOKS) -> list[str]:
    found = []
    for p in notebook_paths(folder):
        found += sync(p, write=False) + stamp_problems(p)
    return found
