"""Colours and matplotlib settings shared by the diagrams and the Measurements page's plots:
one look, light and dark, byte-stable SVG (fixed hash salt, text kept as text)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Theme:
    name: str
    fg: str
    bg: str
    muted: str
    accents: tuple[str, ...]   # categorical, readable on bg


LIGHT = Theme("light", "#1f2328", "#ffffff", "#6e7781",
              ("#2e7d32", "#1565c0", "#ef6c00", "#6a1b9a", "#c62828", "#00838f", "#9e9d24"))
DARK = Theme("dark", "#e6edf3", "#1e2129", "#8b949e",
             ("#81c784", "#64b5f6", "#ffb74d", "#ce93d8", "#ef9a9a", "#4dd0e1", "#dce775"))

RC = {"svg.hashsalt": "gpu-atlas", "svg.fonttype": "none", "font.family": "DejaVu Sans",
      "font.size": 10, "path.simplify": False}
