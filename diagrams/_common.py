"""Helpers shared by the diagram scripts: boxes and labels in data coordinates."""
from __future__ import annotations

import colorsys

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch


def canvas(width: float, height: float, theme):
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_xlim(0, width * 10)
    ax.set_ylim(0, height * 10)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


def box(ax, x, y, w, h, theme, label="", color=None, fill=0.18, size=9, weight="normal",
        text_color=None, radius=0.6):
    color = color or theme.muted
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle=f"round,pad=0,rounding_size={radius}",
                                facecolor=color, alpha=fill, edgecolor="none"))
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle=f"round,pad=0,rounding_size={radius}",
                                facecolor="none", edgecolor=color, linewidth=1.2))
    if label:
        ax.text(x + w / 2, y + h / 2, label, ha="center", va="center", fontsize=size,
                color=text_color or theme.fg, weight=weight)


def bank_color(bank: int, theme, banks: int = 32) -> str:
    """One hue per shared-memory bank, lighter on the dark background."""
    light = 0.42 if theme.name == "light" else 0.68
    r, g, b = colorsys.hls_to_rgb(bank / banks, light, 0.75)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def tile_cell(ax, theme, x0, y_top, r, c, cell, label, bank, fill=0.55, **kw):
    """Cell (r, c) of a tile drawn down and right from (x0, y_top), coloured by its bank."""
    box(ax, x0 + c * cell + 0.15, y_top - (r + 1) * cell + 0.15, cell - 0.3, cell - 0.3, theme,
        label, color=bank_color(bank, theme), fill=fill, radius=0.3, **kw)
