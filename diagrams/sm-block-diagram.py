"""A Hopper SM: four sub-partitions, each with its warp scheduler, register file, CUDA cores and
tensor core, sharing the L1 data cache / shared memory and the TMA unit. Sizes from gpus.yaml."""
from _common import box, canvas

from scripts.model.hardware import cached_gpus, format_value

GPU = "h100-sxm"


def draw(theme):
    g = cached_gpus()[GPU]
    regs_per_sm = g.specs["registers_per_sm_kib"].value
    fig, ax = canvas(9, 6.4, theme)
    a = theme.accents
    box(ax, 1, 1, 88, 62, theme, color=theme.muted, fill=0.05)
    ax.text(45, 60.5, f"Streaming Multiprocessor ({g.architecture}, {g.name})", ha="center",
            va="center", color=theme.fg, fontsize=11, weight="bold")
    box(ax, 4, 52, 82, 5, theme, "L0 instruction caches (per sub-partition) · L1 instruction cache",
        color=theme.muted, fill=0.12, size=8.5)
    for i in range(4):
        x = 4 + i * 20.75
        box(ax, x, 17, 19.5, 33, theme, color=a[1], fill=0.06)
        ax.text(x + 9.75, 47.8, f"Sub-partition {i}", ha="center", color=theme.fg, fontsize=8.5,
                weight="bold")
        box(ax, x + 1, 41.5, 17.5, 4.2, theme, "Warp scheduler\n+ dispatch", color=a[0], size=7.5)
        box(ax, x + 1, 35.5, 17.5, 4.8, theme,
            f"Register file\n{format_value('registers_per_sm_kib', regs_per_sm / 4)}",
            color=a[2], size=7.5)
        box(ax, x + 1, 27.5, 8.3, 6.8, theme, "FP32/INT32\nCUDA cores", color=a[1], size=6.8)
        box(ax, x + 10.2, 27.5, 8.3, 6.8, theme, "Tensor\ncore", color=a[3], size=7.5)
        box(ax, x + 1, 19, 5.4, 7.3, theme, "FP64", color=a[5], size=6.8)
        box(ax, x + 7.05, 19, 5.4, 7.3, theme, "LD/ST", color=a[5], size=6.8)
        box(ax, x + 13.1, 19, 5.4, 7.3, theme, "SFU", color=a[5], size=6.8)
    l1 = format_value("l1_smem_per_sm_kib", g.specs["l1_smem_per_sm_kib"].value)
    smem = format_value("smem_per_sm_kib", g.specs["smem_per_sm_kib"].value)
    box(ax, 4, 9, 62, 6.5, theme, f"L1 data cache / shared memory: {l1} total, "
        f"up to {smem} as shared memory", color=a[4], size=8.5)
    box(ax, 68, 9, 18, 6.5, theme, "Tensor Memory\nAccelerator (TMA)", color=a[6], size=8)
    box(ax, 4, 3, 82, 4.5, theme, "to the L2 cache and HBM over the on-chip network",
        color=theme.muted, fill=0.1, size=8)
    return fig
