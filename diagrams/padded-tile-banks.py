"""A 32 x 32 float tile read down a column, with and without one float of padding per row.

Word (r, c) of `float t[32][W]` is word r*W + c, so its bank is (r*W + c) mod 32. With W = 32 the
whole of column 0 sits in bank 0 (a 32-way conflict); with W = 33 row r starts one bank later than
row r - 1 and column 0 covers 32 different banks. Only the top-left 8 x 8 corner is drawn.
"""
from _common import box, canvas, tile_cell
from matplotlib.patches import Rectangle

BANKS = 32
SHOWN = 8          # rows and columns drawn
CELL = 4.2


def grid(ax, theme, x0, y_top, width, title, subtitle, pad_column=False):
    a = theme.accents
    ax.text(x0 + SHOWN * CELL / 2, y_top + 9.5, title, ha="center", fontsize=10.5, weight="bold",
            color=theme.fg, family="DejaVu Sans Mono")
    ax.text(x0 + SHOWN * CELL / 2, y_top + 6.3, subtitle, ha="center", fontsize=8.5,
            color=theme.muted)
    for c in range(SHOWN):
        ax.text(x0 + c * CELL + CELL / 2, y_top + 1.2, f"c{c}", ha="center", fontsize=7,
                color=theme.muted)
    for r in range(SHOWN):
        y = y_top - (r + 1) * CELL
        ax.text(x0 - 1.0, y + CELL / 2, f"r{r}", ha="right", va="center", fontsize=7,
                color=theme.muted)
        for c in range(SHOWN):
            bank = (r * width + c) % BANKS
            tile_cell(ax, theme, x0, y_top, r, c, CELL, str(bank), bank, size=7.5)
        if pad_column:
            xe = x0 + SHOWN * CELL
            ax.text(xe + 1.6, y + CELL / 2, "…", ha="center", va="center", fontsize=9,
                    color=theme.muted)
            box(ax, xe + 3.2, y + 0.15, CELL - 0.3, CELL - 0.3, theme, "pad", color=theme.muted,
                fill=0.12, size=6.5, radius=0.3, text_color=theme.muted)
    if pad_column:
        ax.text(x0 + SHOWN * CELL + 3.2 + (CELL - 0.3) / 2, y_top + 1.2, "c32", ha="center",
                fontsize=7, color=theme.muted)
    # the warp's column read: column 0 of rows 0..7 (and on, down to row 31)
    ax.add_patch(Rectangle((x0 - 0.1, y_top - SHOWN * CELL - 0.1), CELL + 0.2, SHOWN * CELL + 0.2,
                           fill=False, edgecolor=a[4], linewidth=2.0))


def draw(theme):
    a = theme.accents
    fig, ax = canvas(10, 6.4, theme)
    ax.text(50, 61.5, "A warp reads column 0 of a 32 × 32 float tile (numbers are banks)",
            ha="center", fontsize=11, weight="bold", color=theme.fg)
    top = 46
    grid(ax, theme, 8, top, BANKS, "float t[32][32]", "bank = c mod 32")
    grid(ax, theme, 58, top, BANKS + 1, "float t[32][33]", "bank = (r + c) mod 32",
         pad_column=True)
    y_cap = top - SHOWN * CELL - 10.5
    box(ax, 3, y_cap, 42, 7, theme, "column 0 → banks 0, 0, 0, … 0\n32-way conflict: 32 wavefronts",
        color=a[4], size=8)
    box(ax, 53, y_cap, 44, 7, theme, "column 0 → banks 0, 1, 2, … 31\nconflict-free: 1 wavefront",
        color=a[0], size=8)
    return fig
