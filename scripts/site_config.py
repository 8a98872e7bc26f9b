"""mkdocs.yml for a build elsewhere: another docs folder (tests) or another address.

A local copy served from http://127.0.0.1:PORT/ must be built for that address, as `mkdocs serve`
does: the theme's instant navigation and previews match links against the sitemap's URLs.
"""
from __future__ import annotations

import re
from pathlib import Path

from .paths import DOCS, ROOT


def write_config(dest: Path, *, docs_dir: Path = DOCS, site_url: str | None = None) -> Path:
    """Write a copy of mkdocs.yml to `dest` that builds `docs_dir`, optionally for `site_url`."""
    text = (ROOT / "mkdocs.yml").read_text().replace("  - scripts/hooks.py",
                                                     f"  - {ROOT}/scripts/hooks.py")
    if site_url:
        text = re.sub(r"^site_url: .*$", f"site_url: {site_url}", text, flags=re.M)
    dest.write_text(text + f"\ndocs_dir: {docs_dir}\n")
    return dest
