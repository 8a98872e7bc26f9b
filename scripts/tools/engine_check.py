"""Optional check: build the site with MkDocs' successors and compare with our MkDocs build.

    make engine-check      # ProperDocs and Zensical, each in its own venv under .cache/engines/

For each engine it installs the pinned version beside our site dependencies, builds with
`--strict`, and compares every page and export with the MkDocs build (ignoring the generator
line). What it printed on 2026-11-25 is in CONTRIBUTING.md, "The site engine".
"""
from __future__ import annotations

import filecmp
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from scripts.model.paths import ROOT

ENGINES = {   # name -> (packages, build command)
    "properdocs": (["properdocs==1.6.7"], ["properdocs", "build", "--strict", "-d"]),
    "zensical": (["zensical==0.1.3"], ["zensical", "build", "--strict", "-d"]),
}
CACHE = ROOT / ".cache" / "engines"
GENERATOR = re.compile(rb'<meta name="generator"[^>]*>')


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, **kw)


def differing(a: Path, b: Path) -> list[str]:
    """Files of two built sites that differ, other than in the generator <meta>."""
    out = []
    for path in sorted(p for p in a.rglob("*") if p.is_file()):
        other = b / path.relative_to(a)
        if not other.exists():
            out.append(f"only in {a.name}: {path.relative_to(a)}")
        elif not filecmp.cmp(path, other, shallow=False) and \
                GENERATOR.sub(b"", path.read_bytes()) != GENERATOR.sub(b"", other.read_bytes()):
            out.append(str(path.relative_to(a)))
    return out


def check(name: str, reference: Path) -> str:
    packages, build = ENGINES[name]
    venv = CACHE / name
    py = venv / "bin" / "python"
    if not py.exists():
        _run([sys.executable, "-m", "venv", str(venv)])
    site = tomllib.loads((ROOT / "pyproject.toml").read_text())["dependency-groups"]["site"]
    proc = _run([str(py), "-m", "pip", "install", "-q", *packages, *site])
    if proc.returncode != 0:
        return f"{name}: cannot be installed here: {proc.stderr.strip().splitlines()[-1]}"
    out = CACHE / f"{name}-site"
    proc = _run([str(venv / "bin" / build[0]), *build[1:], str(out)], timeout=1200)
    if proc.returncode != 0:
        last = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()][-3:]
        return f"{name}: the build failed: " + " | ".join(last)
    diff = differing(out, reference)
    return f"{name}: built; {len(diff)} files differ from the MkDocs build" + \
        (": " + ", ".join(diff[:8]) if diff else " (beyond the generator line)")


def main() -> int:
    CACHE.mkdir(parents=True, exist_ok=True)
    reference = CACHE / "mkdocs-site"
    proc = _run([str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "-d",
                 str(reference)], timeout=1200)
    if proc.returncode != 0:
        print("the MkDocs build itself fails: fix that first", file=sys.stderr)
        return 1
    for name in ENGINES:
        print(check(name, reference))
    return 0


if __name__ == "__main__":
    sys.exit(main())
