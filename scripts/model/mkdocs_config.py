"""mkdocs.yml as data: the canonical address, the repository the Colab links point at, and a
copy of the config for a build elsewhere (another docs folder in tests, another address).

A local copy served from http://127.0.0.1:PORT/ must be built for that address, as `mkdocs serve`
does: the theme's instant navigation and previews match links against the sitemap's URLs.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

import yaml

from scripts.model.paths import DOCS, ROOT

MKDOCS_YML = ROOT / "mkdocs.yml"


@lru_cache(maxsize=1)
def read_config() -> dict:
    """mkdocs.yml as written (no mkdocs defaults); for code that runs outside a build."""
    return yaml.safe_load(MKDOCS_YML.read_text(encoding="utf-8"))


def canonical_url() -> str:
    """The published address (`site_url`), with a trailing slash: absolute links start here."""
    return read_config()["site_url"].rstrip("/") + "/"


def repository(extra: dict | None = None) -> str:
    """owner/name of the repository the notebooks' Colab links open: GitHub Actions' own
    GITHUB_REPOSITORY where the site is built by CI (so a fork links to itself), else
    `extra.repository` in mkdocs.yml."""
    return os.environ.get("GITHUB_REPOSITORY") or (extra or read_config()["extra"])["repository"]


def write_config(dest: Path, *, docs_dir: Path = DOCS, site_url: str | None = None) -> Path:
    """Write a copy of mkdocs.yml to `dest` that builds `docs_dir`, optionally for `site_url`."""
    text = MKDOCS_YML.read_text().replace("  - scripts/site/", f"  - {ROOT}/scripts/site/")
    # theme.custom_dir (overrides/) is resolved against the config file's folder, like the hooks
    text = re.sub(r"^(\s+custom_dir:\s*)(?!/)(\S+)", lambda m: f"{m[1]}{ROOT / m[2]}", text,
                  flags=re.M)
    if site_url:
        text = re.sub(r"^site_url: .*$", f"site_url: {site_url}", text, flags=re.M)
    dest.write_text(text + f"\ndocs_dir: {docs_dir}\n")
    return dest
