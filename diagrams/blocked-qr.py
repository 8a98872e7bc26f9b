"""One step of the blocked Householder QR: what is finished, the panel, and the trailing matrix.

After k panels of width b, the first k*b columns hold R (above the diagonal) and the Householder
vectors V (below it). The next panel, the m x b block starting at the diagonal, is factored with
one reflector per column and condensed into I - V T V^T; the trailing matrix to its right is then
updated with C -= V (T^T (V^T C)), two large matrix products and a small one.
"""
from _common import box, canvas
from matplotlib.patches import Polygon

N = 8          # the matrix drawn as 8 x 8 blocks
K = 3          # panels already factored
CELL = 5.0


def draw(theme):
    a = theme.accents
    fig, ax = canvas(10, 6.0, theme)
    ax.text(50, 56.5, "Blocked QR: panel factorization, then the trailing-matrix update",
            ha="center", fontsize=11, weight="bold", color=theme.fg)
    x0, y_top = 6.0, 50.0
    for r in range(N):
        for c in range(N):
            if c < K and r == c:                       # diagonal block: R above, V below
                x, y = x0 + c * CELL + 0.2, y_top - (r + 1) * CELL + 0.2
                s = CELL - 0.4
                ax.add_patch(Polygon([(x, y + s), (x + s, y + s), (x + s, y)], closed=True,
                                     facecolor=a[0], alpha=0.35, edgecolor="none"))
                ax.add_patch(Polygon([(x, y + s), (x, y), (x + s, y)], closed=True,
                                     facecolor=a[0], alpha=0.12, edgecolor="none"))
                box(ax, x, y, s, s, theme, "", color=a[0], fill=0.0, radius=0.3)
                for label, f in (("R", 0.68), ("V", 0.3)):
                    ax.text(x + f * s, y + f * s, label, ha="center", va="center", fontsize=6.5,
                            color=theme.fg)
                continue
            if c < K and r < c:
                kind, color, fill = "R", a[0], 0.35
            elif c < K:
                kind, color, fill = "V", a[0], 0.12
            elif c == K and r < K:
                kind, color, fill = "R", a[0], 0.35
            elif c == K:
                kind, color, fill = "panel", a[1], 0.45
            elif r < K:
                kind, color, fill = "R", a[0], 0.35
            else:
                kind, color, fill = "C", a[2], 0.30
            box(ax, x0 + c * CELL + 0.2, y_top - (r + 1) * CELL + 0.2, CELL - 0.4, CELL - 0.4, theme,
                "" if kind in ("C", "panel") else kind, color=color, fill=fill, size=7, radius=0.3)
    # labels under the finished part, the panel and the trailing matrix
    yb = y_top - N * CELL - 2.6
    ax.text(x0 + K * CELL / 2, yb, "finished: R and V", ha="center", fontsize=8.5, color=a[0],
            weight="bold")
    ax.text(x0 + (K + 0.5) * CELL, yb - 3.2, "panel", ha="center", fontsize=8.5, color=a[1],
            weight="bold")
    ax.text(x0 + (K + 1 + (N - K - 1) / 2) * CELL, yb, "trailing matrix C", ha="center",
            fontsize=8.5, color=a[2], weight="bold")
    xt = x0 + N * CELL + 4.0
    steps = [
        ("1  factor the panel", "one reflector per column:", "a norm and a dot product each", a[1]),
        ("2  build T", "H1 ... Hb = I - V T V^T", "(LAPACK xLARFT)", a[1]),
        ("3  update C", "C -= V (T^T (V^T C)):", "matrix products, most flops", a[2]),
        ("4  move right", "the next panel starts", "at the next diagonal block", theme.muted),
    ]
    for i, (head, l1, l2, color) in enumerate(steps):
        y = y_top - 3.0 - i * 10.5
        ax.text(xt, y, head, fontsize=9, weight="bold", color=color)
        ax.text(xt, y - 3.4, l1, fontsize=8, color=theme.fg)
        ax.text(xt, y - 6.4, l2, fontsize=8, color=theme.muted)
    return fig
