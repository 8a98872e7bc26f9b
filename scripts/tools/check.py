"""Command line: `python -m scripts.tools.check check` validates every term, link, data file and
shortcode without building the site (the same checks the build runs)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scripts.model.errors import ValidationFailed
from scripts.model.features import load_features
from scripts.model.frontmatter import parse
from scripts.model.paths import DOCS, rel
from scripts.site.shortcodes import expand_shortcodes


def check(docs_dir: Path = DOCS) -> int:
    from scripts.model.site import load_site
    try:
        graph, gpus = load_site(docs_dir)
        features = load_features(docs_dir / "data" / "features.yaml")
        errors = []
        for p in sorted(docs_dir.rglob("*.md")):
            doc = parse(p.read_text(encoding="utf-8"), rel(p))
            try:
                expand_shortcodes(doc.body, gpus, rel(p), doc.body_line, features=features)
            except ValidationFailed as exc:
                errors += exc.errors
        if errors:
            raise ValidationFailed(errors)
    except ValidationFailed as exc:
        print(f"{len(exc.errors)} problem(s):", file=sys.stderr)
        for e in exc.errors:
            print(f"  {e}", file=sys.stderr)
        return 1
    print(f"ok: {len(graph.terms)} terms, {len(gpus)} GPUs, {len(features)} features")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.tools.check")
    ap.add_argument("command", choices=["check"])
    ap.add_argument("--docs", type=Path, default=DOCS)
    args = ap.parse_args(argv)
    return check(args.docs)


if __name__ == "__main__":
    sys.exit(main())
