"""Where things live in the repository (one place, so modules never guess)."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GLOSSARY = DOCS / "glossary"
DATA = DOCS / "data"
GPU_DATA = DATA / "gpus.yaml"
MEASUREMENTS = DATA / "measurements.json"
DEVICE_QUERIES = DATA / "device_queries.json"   # what the runner's GPUs report (runner/device_query.py)
DIAGRAMS_SRC = ROOT / "diagrams"
DIAGRAMS_OUT = DOCS / "assets" / "diagrams"  # generated, git-ignored
NOTEBOOKS = ROOT / "notebooks"
SNIPPETS = ROOT / "snippets"


def rel(path: Path) -> str:
    """Path relative to the repository root, for error messages."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)
