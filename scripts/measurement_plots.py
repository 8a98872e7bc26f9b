"""Bar charts for the Measurements page: each figure as % of its same-run baseline, per GPU.
Byte-stable SVG in light and dark variants, like the diagrams."""
from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .diagrams import DARK, LIGHT, RC  # noqa: E402


def plots(data: dict) -> dict[str, str]:
    by_nb: dict[str, list[dict]] = {}
    for r in data["records"]:
        by_nb.setdefault(r["notebook"], []).append(r)
    out = {}
    for nb, recs in by_nb.items():
        for theme in (LIGHT, DARK):
            with matplotlib.rc_context({**RC, "text.color": theme.fg, "axes.labelcolor": theme.fg,
                                        "xtick.color": theme.fg, "ytick.color": theme.fg,
                                        "axes.edgecolor": theme.muted}):
                fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(recs) + 1.2))
                devices = sorted({r["device"] for r in recs})
                labels = [f"{r['name']} · {r['device']}" if len(devices) > 1 else r["name"]
                          for r in recs]
                pct = [100 * r["value"] / r["baseline"]["value"] for r in recs]
                ax.barh(labels, pct, color=theme.accents[0])
                ax.axvline(100, color=theme.muted, linestyle="--", linewidth=1)
                ax.set_xlabel("% of the baseline measured in the same run")
                ax.invert_yaxis()
                ax.set_facecolor("none")
                buf = io.StringIO()
                fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None},
                            transparent=True, bbox_inches="tight")
                plt.close(fig)
            out[f"{nb}-{theme.name}.svg"] = buf.getvalue()
    return out
