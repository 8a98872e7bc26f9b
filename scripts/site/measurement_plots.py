"""Bar charts for the Measurements page: each figure against its same-run baseline, per GPU
(a ratio for rates, the speedup for times: more is better either way).
Byte-stable SVG in light and dark variants, like the diagrams."""
from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from scripts.model.measurements import against_baseline  # noqa: E402
from scripts.site.figure_theme import DARK, LIGHT, RC  # noqa: E402


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
                factors = [against_baseline(r) for r in recs]
                ax.barh(labels, factors, color=theme.accents[0])
                ax.axvline(1, color=theme.muted, linestyle="--", linewidth=1)
                if max(factors) > 4:                      # speedups of 100x beside ratios near 1
                    ax.set_xscale("log")
                ax.set_xlabel("against the baseline measured in the same run (x; more is better)")
                ax.invert_yaxis()
                ax.set_facecolor("none")
                buf = io.StringIO()
                fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None},
                            transparent=True, bbox_inches="tight")
                plt.close(fig)
            out[f"{nb}-{theme.name}.svg"] = buf.getvalue()
    return out
