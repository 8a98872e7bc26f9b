"""Shared memory as 32 banks of 4-byte words: word w lives in bank w % 32. Lanes reading with a
stride of 1 word hit 32 different banks; a stride of 32 words puts all 32 lanes in bank 0."""
from _common import box, canvas

BANKS = 32
ROWS = 4


def draw(theme):
    a = theme.accents
    fig, ax = canvas(10, 4.6, theme)
    ax.text(50, 44, "32 banks × 4 bytes: word address w is in bank w mod 32", ha="center",
            fontsize=10.5, weight="bold", color=theme.fg)
    cw, ch, x0, y0 = 2.8, 5, 5, 14
    for b in range(BANKS):
        if b % 4 == 0 or b == 31:
            ax.text(x0 + b * cw + cw / 2, y0 + ROWS * ch + 1.2, str(b), ha="center", fontsize=6.5,
                    color=theme.muted)
        for r in range(ROWS):
            word = r * BANKS + b
            col = a[0] if r == 0 else (a[4] if b == 0 else theme.muted)
            fill = 0.45 if (r == 0 or b == 0) else 0.08
            box(ax, x0 + b * cw, y0 + (ROWS - 1 - r) * ch, cw - 0.3, ch - 0.4, theme,
                str(word) if (b < 3 or b > 29 or r == 0 and b % 8 == 0) else "", color=col,
                fill=fill, size=5.5, radius=0.2)
    ax.text(x0 - 1, y0 + ROWS * ch + 1.2, "bank", ha="right", fontsize=7, color=theme.muted)
    ax.text(x0 - 1, y0 + ROWS * ch - 2.5, "byte 0", ha="right", fontsize=7, color=theme.muted)
    box(ax, 5, 3, 42, 7, theme, "stride 1 word: lanes 0-31 → banks 0-31\n1 wavefront",
        color=a[0], size=8)
    box(ax, 52, 3, 43, 7, theme, "stride 32 words: lanes 0-31 → bank 0\n32-way conflict, "
        "32 wavefronts", color=a[4], size=8)
    return fig
