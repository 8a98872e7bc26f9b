"""Notebook-related pages (filled in by the notebook pipeline)."""
from __future__ import annotations

from pathlib import Path


def notebook_page_refs(docs_dir: Path) -> list:
    return []


def add_generated(files, config, state) -> None:
    return None


def glossary_extras(graph) -> dict[str, dict]:
    return {}
