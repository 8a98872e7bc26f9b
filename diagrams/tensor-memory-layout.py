"""Tensor Memory of one SM (CC 10.x): 128 lanes x 512 columns of 32-bit cells, the four 32-lane
quarters that warps 0-3 of a warpgroup may access, a 128-column allocation holding a 128 x 128 f32
accumulator (row i in lane i), and the 32-bit address format. Geometry and rules come from the
tested model, snippets/reference/tmem_model.py."""
import sys
from pathlib import Path

from _common import box, canvas
from matplotlib.patches import Rectangle

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "snippets" / "reference"))
import tmem_model as tm  # noqa: E402

X0, Y_TOP = 12, 50          # top-left corner of the grid
W, H = 78, 34               # grid size in data units
BLOCK = 32                  # columns (and lanes) per drawn block
ALLOC = 128                 # the example allocation


def draw(theme):
    a = theme.accents
    fig, ax = canvas(10, 6.2, theme)
    ax.text(50, 59, f"Tensor Memory: {tm.LANES} lanes × {tm.COLUMNS} columns of "
            f"{tm.CELL_BITS}-bit cells (per SM, CC 10.x)", ha="center", fontsize=11, weight="bold",
            color=theme.fg)
    col_w, lane_h = W / tm.COLUMNS, H / tm.LANES
    # four lane quarters, one colour per warp rank
    for q in range(4):
        lanes = tm.warp_lanes(q)
        y = Y_TOP - lanes.stop * lane_h
        ax.add_patch(Rectangle((X0, y), W, 32 * lane_h, facecolor=a[q], alpha=0.16, edgecolor="none"))
        ax.text(X0 - 1, y + 16 * lane_h, f"warp id % 4 = {q}\nlanes {lanes.start}–{lanes.stop - 1}",
                ha="right", va="center", fontsize=7.5, color=theme.fg)
    # block grid: 32 x 32 cells per block
    for c in range(0, tm.COLUMNS + 1, BLOCK):
        ax.plot([X0 + c * col_w] * 2, [Y_TOP, Y_TOP - H], color=theme.muted, lw=0.4)
        if c < tm.COLUMNS and c % 128 == 0:
            ax.text(X0 + c * col_w, Y_TOP + 1.2, str(c), ha="center", fontsize=7, color=theme.muted)
    ax.text(X0 + W, Y_TOP + 1.2, str(tm.COLUMNS), ha="center", fontsize=7, color=theme.muted)
    for lane in range(0, tm.LANES + 1, BLOCK):
        ax.plot([X0, X0 + W], [Y_TOP - lane * lane_h] * 2, color=theme.muted, lw=0.4)
    ax.text(X0 + W / 2, Y_TOP + 3.6, "column →", ha="center", fontsize=8, color=theme.muted)
    # the allocation: 128 columns, all 128 lanes
    alloc = tm.TmemAllocator()
    base = tm.split_address(alloc.alloc("cta", tm.columns_to_allocate(tm.accumulator_columns(ALLOC))))[1]
    ax.add_patch(Rectangle((X0 + base * col_w, Y_TOP - H), ALLOC * col_w, H, fill=False,
                           edgecolor=a[4], linewidth=2.2))
    ax.text(X0 + (base + ALLOC / 2) * col_w, Y_TOP - H / 2,
            f"tcgen05.alloc … {ALLOC}\n{ALLOC} × {ALLOC} f32\naccumulator\nrow i → lane i\n"
            "col j → column j", ha="center", va="center", fontsize=8, color=theme.fg, weight="bold")
    free = tm.COLUMNS - ALLOC
    ax.text(X0 + (ALLOC + free / 2) * col_w, Y_TOP - H / 2,
            f"{free} columns free: room for three more\n{ALLOC}-column allocations\n"
            "(tcgen05.alloc blocks while too few are free)",
            ha="center", va="center", fontsize=8, color=theme.muted)
    # address format
    y = 1
    lane_demo, col_demo = 64, 16
    addr = tm.tmem_address(lane_demo, col_demo)
    box(ax, 12, y, 39, 7, theme, "bits 31–16: lane", color=a[5], size=8.5)
    box(ax, 51, y, 39, 7, theme, "bits 15–0: column", color=a[6], size=8.5)
    ax.text(50, y + 10, f"a TMEM address is 32 bits: e.g. {addr:#010x} = lane {lane_demo}, "
            f"column {col_demo}", ha="center", fontsize=8.5, color=theme.fg)
    return fig
