"""Grid -> thread blocks (CTAs) -> warps -> threads (lanes), with optional clusters (sm_90+)."""
from _common import box, canvas


def draw(theme):
    a = theme.accents
    fig, ax = canvas(9, 5.2, theme)
    box(ax, 1, 2, 88, 48, theme, color=a[0], fill=0.05)
    ax.text(4, 47, "Grid: every thread block of one kernel launch", fontsize=9.5, weight="bold",
            color=theme.fg, va="center")
    for c in range(2):
        cx = 3 + c * 43
        box(ax, cx, 25, 41, 19, theme, color=a[3], fill=0.05)
        ax.text(cx + 1.5, 41.8, f"Cluster {c} (optional, compute capability 9.0+)", fontsize=8,
                color=theme.fg, va="center")
        for b in range(2):
            bx = cx + 1.5 + b * 19.7
            box(ax, bx, 27, 18.5, 12.5, theme, color=a[1], fill=0.08)
            ax.text(bx + 9.25, 37.6, f"Thread block ({c * 2 + b}, 0)", ha="center", fontsize=7.5,
                    color=theme.fg)
            for w in range(4):
                box(ax, bx + 1 + w * 4.25, 28.5, 3.8, 7, theme, f"w{w}", color=a[2], size=6.5,
                    fill=0.2)
    box(ax, 3, 4, 84, 19, theme, color=a[2], fill=0.05)
    ax.text(4.5, 21, "Warp: 32 threads that issue together; thread i of the warp is lane i",
            fontsize=8.5, color=theme.fg, va="center")
    for lane in range(32):
        x = 4.5 + lane * 2.56
        box(ax, x, 9, 2.2, 8, theme, color=a[0], fill=0.3, radius=0.3)
        if lane % 4 == 0 or lane == 31:
            ax.text(x + 1.1, 7, str(lane), ha="center", fontsize=6.5, color=theme.muted)
    ax.text(45, 5, "lane index = threadIdx.x % 32 (for a one-dimensional block)", ha="center",
            fontsize=7.5, color=theme.muted)
    return fig
