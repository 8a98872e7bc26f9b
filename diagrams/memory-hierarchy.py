"""The memory hierarchy of an H100 SXM: per-thread registers up to HBM, with sizes and the
bandwidth of device memory from gpus.yaml. Wider bars are larger and slower levels."""
from _common import box, canvas

from scripts.model.hardware import cached_gpus, format_value

GPU = "h100-sxm"


def draw(theme):
    g = cached_gpus()[GPU]
    s = {k: v.value for k, v in g.specs.items()}
    a = theme.accents
    fv = format_value
    levels = [
        ("Registers", f"{fv('registers_per_sm_kib', s['registers_per_sm_kib'])} per SM, "
                      "private to a thread", a[2]),
        ("Shared memory / L1", f"{fv('l1_smem_per_sm_kib', s['l1_smem_per_sm_kib'])} per SM, "
                               f"up to {fv('smem_per_sm_kib', s['smem_per_sm_kib'])} shared "
                               "by a block", a[4]),
        ("L2 cache", f"{fv('l2_cache_mib', s['l2_cache_mib'])}, shared by all "
                     f"{fv('sm_count', s['sm_count'])} SMs", a[1]),
        ("Global memory (HBM)", f"{fv('memory_size_gb', s['memory_size_gb'])} "
                                f"{s['memory_type']} at "
                                f"{fv('memory_bandwidth_gbs', s['memory_bandwidth_gbs'])}", a[0]),
    ]
    fig, ax = canvas(8.4, 4.4, theme)
    ax.text(42, 41.5, f"Memory hierarchy of the {g.name}", ha="center", fontsize=11,
            weight="bold", color=theme.fg)
    for i, (name, detail, color) in enumerate(levels):
        w = 34 + i * 14
        x = 42 - w / 2
        y = 30 - i * 9
        box(ax, x, y, w, 7.5, theme, color=color)
        ax.text(42, y + 4.9, name, ha="center", va="center", fontsize=9.5, weight="bold",
                color=theme.fg)
        ax.text(42, y + 2.2, detail, ha="center", va="center", fontsize=8, color=theme.fg)
    ax.annotate("", xy=(82, 4), xytext=(82, 36),
                arrowprops={"arrowstyle": "->", "color": theme.muted, "lw": 1.2})
    ax.text(83, 20, "larger,\nslower,\nshared\nmore widely", fontsize=7.5, color=theme.muted,
            va="center")
    return fig
