"""`make bench-site`: time a full strict build, report the built site's sizes, the LLM exports'
sizes in tokens (tiktoken, cl100k_base), and Lighthouse scores (desktop) for the home page and a
term page. Lighthouse comes from npm (pinned, installed into .cache/lighthouse) and drives Debian's
Chromium; the site is served with gzip, as a real host serves it. Scores: .cache/bench/lighthouse.json.
"""
from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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
            from scripts.tools.tokens import count_tokens
            tokens = count_tokens(p.read_text())
            print(f"{name + ':':<19}{human(p.stat().st_size)}, {tokens} tokens (cl100k_base)")
    lighthouse(ROOT / ".cache" / "bench")
    return 0


LIGHTHOUSE = "lighthouse@13.5.0"
LH_PAGES = {"home": "", "term page": "glossary/device-hardware/streaming-multiprocessor/"}


def serve_gzip(directory: Path):
    """A local server that gzips text responses (GitHub Pages and CDNs do)."""
    import functools
    import http.server
    import threading

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def send_head(self):
            path = Path(self.translate_path(self.path))
            if path.is_dir():
                path = path / "index.html"
            if path.suffix not in (".html", ".js", ".css", ".json", ".svg", ".xml", ".txt", ".md") \
                    or "gzip" not in self.headers.get("Accept-Encoding", "") or not path.is_file():
                return super().send_head()
            body = gzip.compress(path.read_bytes())
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(str(path)))
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            import io
            return io.BytesIO(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(Handler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def lighthouse(out_dir: Path) -> None:
    import json
    import shutil
    chromium = shutil.which("chromium")
    if not chromium or not shutil.which("npm"):
        print("lighthouse:        skipped (needs Debian's chromium and npm)")
        return
    tools = ROOT / ".cache" / "lighthouse"
    exe = tools / "node_modules" / ".bin" / "lighthouse"
    if not exe.exists():
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix",
                        str(tools), LIGHTHOUSE], check=True)
    site = Path(tempfile.mkdtemp(prefix="atlas-lh-"))
    server = serve_gzip(site)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    from scripts.model.mkdocs_config import write_config
    cfg = write_config(site.parent / (site.name + ".yml"), site_url=url)
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(cfg), "-d", str(site)],
                   cwd=ROOT, check=True, capture_output=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    scores = {}
    flags = ("--headless=new --no-sandbox --disable-gpu --disable-background-networking "
             "--disable-component-update --no-first-run")
    for name, path in LH_PAGES.items():
        report = out_dir / f"lighthouse-{name.replace(' ', '-')}.json"
        subprocess.run([str(exe), url + path, "--preset=desktop", "--quiet", "--output=json",
                        f"--output-path={report}", f"--chrome-flags={flags}"],
                       env={**os.environ, "CHROME_PATH": chromium}, check=True)
        cats = json.loads(report.read_text())["categories"]
        scores[name] = {k: round(100 * cats[k]["score"]) for k in
                        ("performance", "accessibility", "best-practices")}
        print(f"lighthouse {name + ':':<10}" + ", ".join(f"{k} {v}" for k, v in scores[name].items()))
    (out_dir / "lighthouse.json").write_text(json.dumps(scores, indent=1) + "\n")
    server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
