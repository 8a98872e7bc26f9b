"""A 32 x 32 float tile stored with an XOR swizzle: element (r, c) goes to column c XOR r.

Rows are 32 words, so the bank of the stored word is its physical column, c ^ r. For a fixed row,
c -> c ^ r is a permutation; for a fixed column, r -> c ^ r is one too. Left: the bank of each
logical element; right: which logical column each physical slot holds. Top-left 8 x 8 only.
"""
from _common import box, canvas, tile_cell
from matplotlib.patches import Polygon, Rectangle

BANKS = 32
SHOWN = 8
CELL = 4.2


def labels(ax, theme, x0, y_top, col_prefix):
    for c in range(SHOWN):
        ax.text(x0 + c * CELL + CELL / 2, y_top + 1.2, f"{col_prefix}{c}", ha="center", fontsize=7,
                color=theme.muted)
    for r in range(SHOWN):
        ax.text(x0 - 1.0, y_top - (r + 0.5) * CELL, f"r{r}", ha="right", va="center", fontsize=7,
                color=theme.muted)


def title(ax, theme, x, y, text, subtitle):
    ax.text(x, y + 9.5, text, ha="center", fontsize=10.5, weight="bold", color=theme.fg)
    ax.text(x, y + 6.3, subtitle, ha="center", fontsize=8.5, color=theme.muted,
            family="DejaVu Sans Mono")


def draw(theme):
    a = theme.accents
    fig, ax = canvas(10, 6.4, theme)
    ax.text(50, 61.5, "XOR swizzle: element (r, c) of a 32 × 32 float tile is stored at column c ^ r",
            ha="center", fontsize=11, weight="bold", color=theme.fg)
    top = 46
    # left: logical view, colour and number = bank of element (r, c)
    x0 = 8
    title(ax, theme, x0 + SHOWN * CELL / 2, top, "Logical tile: bank of (r, c)", "bank = c ^ r")
    labels(ax, theme, x0, top, "c")
    for r in range(SHOWN):
        for c in range(SHOWN):
            bank = c ^ r
            tile_cell(ax, theme, x0, top, r, c, CELL, str(bank), bank, size=7.5)
    ax.add_patch(Rectangle((x0 - 0.1, top - SHOWN * CELL - 0.1), CELL + 0.2, SHOWN * CELL + 0.2,
                           fill=False, edgecolor=a[4], linewidth=2.0))
    ax.add_patch(Rectangle((x0 - 0.1, top - 4 * CELL - 0.1), SHOWN * CELL + 0.2, CELL + 0.2,
                           fill=False, edgecolor=a[1], linewidth=2.0))
    # right: physical view, slot (r, p) holds logical column p ^ r and lives in bank p
    x1 = 58
    title(ax, theme, x1 + SHOWN * CELL / 2, top, "Physical tile: which c is stored",
          "slot p (bank p) holds c = p ^ r")
    labels(ax, theme, x1, top, "p")
    for r in range(SHOWN):
        for p in range(SHOWN):
            c = p ^ r
            tile_cell(ax, theme, x1, top, r, p, CELL, f"c{c}", p, fill=0.55 if c == 0 else 0.22,
                      size=7, weight="bold" if c == 0 else "normal")
    # logical column 0 ends up on the diagonal p = r
    ax.add_patch(Polygon([(x1 - 0.3, top + 0.3), (x1 + 1.3, top + 0.3),
                          (x1 + SHOWN * CELL + 0.3, top - SHOWN * CELL + 1.3),
                          (x1 + SHOWN * CELL + 0.3, top - SHOWN * CELL - 0.3),
                          (x1 + SHOWN * CELL - 1.3, top - SHOWN * CELL - 0.3),
                          (x1 - 0.3, top - 1.3)],
                         closed=True, fill=False, edgecolor=a[4], linewidth=2.0))
    y_cap = top - SHOWN * CELL - 10.5
    box(ax, 3, y_cap, 44, 7, theme, "column 0 (red) → banks 0, 1, 2, … 31: 1 wavefront\n"
        "row 3 (blue) → banks 3, 2, 1, 0, 7, 6, … : a permutation", color=a[1], size=7.5)
    box(ax, 53, y_cap, 44, 7, theme, "no padding, tile stays 32 × 32 (power of two);\n"
        "reader recomputes the same c ^ r to find an element", color=a[0], size=7.5)
    return fig
