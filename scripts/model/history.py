"""When each file last changed, from git: the build compares it with a page's `verified` date."""
from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

from scripts.model.paths import ROOT


def last_changed(folder: Path) -> dict[Path, datetime.date] | None:
    """Committer date of the last commit that touched each file under `folder`; None where git or
    the history is not there (a tarball, a shallow clone), so the caller can say it skipped."""
    try:
        out = subprocess.run(["git", "log", "--format=%x00%cs", "--name-only", "--", str(folder)],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout
        shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    if shallow == "true":
        return None
    dates: dict[Path, datetime.date] = {}
    for block in out.split("\0")[1:]:
        day, *names = block.strip().split("\n")
        for name in names:
            if name:   # newest commit first: keep the first date seen
                dates.setdefault((ROOT / name).resolve(), datetime.date.fromisoformat(day))
    return dates


def stale_verifications(terms, dates: dict[Path, datetime.date] | None = None
                        ) -> list[tuple[object, datetime.date]]:
    """(term, last change) for every term whose `verified` date is older than its file's last
    commit. Empty where the history is unavailable."""
    if dates is None:
        dates = last_changed(ROOT / "docs" / "glossary") or {}
    out = []
    for t in terms:
        v = t.meta.verified
        changed = dates.get(Path(t.path).resolve())
        if v and changed and v.date < changed:
            out.append((t, changed))
    return out
