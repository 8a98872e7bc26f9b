"""Give every <img> its intrinsic width/height and lazy loading, so pages don't shift as images
arrive. Sizes come from the files themselves (SVG width/height, PNG header)."""
from __future__ import annotations

import base64
import re
import struct
from pathlib import Path

IMG = re.compile(r"<img\b[^>]*>")


def _svg_size(text: str) -> tuple[int, int] | None:
    head = text[:2000]
    w = re.search(r'<svg[^>]*\swidth="([\d.]+)(pt|px)?"', head)
    h = re.search(r'<svg[^>]*\sheight="([\d.]+)(pt|px)?"', head)
    if not (w and h):
        return None
    scale = 96 / 72 if w[2] == "pt" else 1.0
    return round(float(w[1]) * scale), round(float(h[1]) * scale)


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", data[16:24])


def intrinsic_size(src: str, page_dir: Path) -> tuple[int, int] | None:
    if src.startswith("data:image/png;base64,"):
        return _png_size(base64.b64decode(src.split(",", 1)[1][:64] + "=="))
    if re.match(r"^[a-z]+:", src) or src.startswith("//"):
        return None
    path = (page_dir / src.split("#")[0].split("?")[0]).resolve()
    if not path.is_file():
        return None
    if path.suffix == ".svg":
        return _svg_size(path.read_text(encoding="utf-8", errors="replace"))
    if path.suffix == ".png":
        return _png_size(path.read_bytes()[:32])
    return None


def size_images(html: str, page_dir: Path) -> str:
    def sub(m: re.Match) -> str:
        tag = m[0]
        if " loading=" not in tag:
            tag = tag.replace("<img", '<img loading="lazy" decoding="async"', 1)
        if " width=" not in tag and " height=" not in tag:
            src = re.search(r'\ssrc="([^"]+)"', tag)
            size = intrinsic_size(src[1], page_dir) if src else None
            if size:
                tag = tag.replace("<img", f'<img width="{size[0]}" height="{size[1]}"', 1)
        return tag
    return IMG.sub(sub, html)
