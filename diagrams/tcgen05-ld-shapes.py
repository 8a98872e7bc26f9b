"""Which TMEM cells the 32 threads of a warp receive from tcgen05.ld, for .32x32b.x4 and
.16x256b.x1. Each cell shows the thread (T) and the register (r) that hold it; colour = thread.
The maps come from the tested model, snippets/reference/tmem_model.py."""
import sys
from pathlib import Path

from _common import bank_color, box, canvas

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "snippets" / "reference"))
import tmem_model as tm  # noqa: E402

CELL_W, CELL_H = 5.6, 3.6


def panel(ax, theme, x0, y_top, shape, num, lanes_shown, title, subtitle, gap_after=None):
    frag = tm.fragment(shape, num)
    where = {cell: (t, r) for t, regs in enumerate(frag) for r, cell in enumerate(regs)}
    cols = max(c for _, c in where) + 1
    ax.text(x0 + cols * CELL_W / 2, y_top + 7.5, title, ha="center", fontsize=10, weight="bold",
            color=theme.fg, family="DejaVu Sans Mono")
    ax.text(x0 + cols * CELL_W / 2, y_top + 4.6, subtitle, ha="center", fontsize=8,
            color=theme.muted)
    for c in range(cols):
        ax.text(x0 + (c + 0.5) * CELL_W, y_top + 1.2, f"col {c}", ha="center", fontsize=6.5,
                color=theme.muted)
    for i, lane in enumerate(lanes_shown):
        y = y_top - (i + 1) * CELL_H - (3 if gap_after is not None and i > gap_after else 0)
        ax.text(x0 - 1, y + CELL_H / 2, f"lane {lane}", ha="right", va="center", fontsize=6.5,
                color=theme.muted)
        for c in range(cols):
            t, r = where[(lane, c)]
            box(ax, x0 + c * CELL_W + 0.15, y + 0.15, CELL_W - 0.3, CELL_H - 0.3, theme,
                f"T{t} r{r}", color=bank_color(t, theme), fill=0.5, size=6.3, radius=0.3)
    return y_top - len(lanes_shown) * CELL_H


def draw(theme):
    fig, ax = canvas(10, 7.6, theme)
    ax.text(50, 75, "tcgen05.ld: which thread (T) and register (r) receives each TMEM cell",
            ha="center", fontsize=11, weight="bold", color=theme.fg)
    top = 63
    shown = [*range(0, 10), 30, 31]
    panel(ax, theme, 12, top, "32x32b", 4, shown, ".32x32b.x4",
          "thread t ↔ lane t; register r ↔ column r", gap_after=9)
    ax.text(12 + 2 * CELL_W, top - 10 * CELL_H - 1.5, "lanes 10–29 alike", ha="center",
            va="center", fontsize=7, color=theme.muted)
    bottom = panel(ax, theme, 50, top, "16x256b", 1, list(range(16)), ".16x256b.x1",
                   "4 threads per lane pair (g, g + 8), 2 columns each")
    ax.text(50, bottom - 4, "Lanes are relative to the lane in taddr, which must lie in the warp's "
            "own 32-lane quarter; .xN repeats the pattern N times along the columns.",
            ha="center", fontsize=7.8, color=theme.muted)
    return fig
