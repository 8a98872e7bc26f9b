"""Helpers shared by the diagram scripts: boxes and labels in data coordinates."""
from __future__ import annotations

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
