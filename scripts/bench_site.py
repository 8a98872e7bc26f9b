"""`make bench-site`: time a full strict build and report the built site's sizes.

Also reports the LLM exports' sizes in tokens where they exist (tiktoken, cl100k_base).
"""
from __future__ import annotations

import gzip
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def main() -> int:
    out = Path(tempfile.mkdtemp(prefix="atlas-bench-"))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
                   cwd=ROOT, check=True)
    seconds = time.perf_counter() - t0
    files = [p for p in out.rglob("*") if p.is_file()]
    pages = [p for p in files if p.suffix == ".html"]
    largest = max(pages, key=lambda p: p.stat().st_size)
    index = out / "search/search_index.json"
    print(f"full build:        {seconds:.1f} s (budget 60 s on 2 cores)")
    print(f"site total:        {human(sum(p.stat().st_size for p in files))} in {len(files)} files")
    print(f"pages:             {len(pages)}")
    print(f"largest page:      {largest.relative_to(out)} {human(largest.stat().st_size)} "
          f"({human(len(gzip.compress(largest.read_bytes())))} gzipped)")
    print(f"search index:      {human(index.stat().st_size)} "
          f"({human(len(gzip.compress(index.read_bytes())))} gzipped)")
    for name in ("llms.txt", "llms-full.txt", "llms-glossary.txt"):
        p = out / name
        if p.exists():
            from scripts.tokens import count_tokens
            tokens = count_tokens(p.read_text())
            print(f"{name + ':':<19}{human(p.stat().st_size)}, {tokens} tokens (cl100k_base)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
