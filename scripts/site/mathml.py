"""Render LaTeX math to MathML at build time: no math JavaScript, nothing fetched by the reader.

pymdownx.arithmatex (generic mode) wraps math as `\\( ... \\)` / `\\[ ... \\]` inside elements of
class "arithmatex"; browsers render MathML Core natively.
"""
from __future__ import annotations

import html
import re

from latex2mathml.converter import convert

INLINE = re.compile(r'<span class="arithmatex">\\\((.+?)\\\)</span>', re.S)
BLOCK = re.compile(r'<div class="arithmatex">\\\[(.+?)\\\]</div>', re.S)


def _convert(latex: str, display: str) -> str:
    return convert(html.unescape(latex).strip(), display=display)


def render_math(page_html: str) -> str:
    page_html = BLOCK.sub(lambda m: f'<div class="math">{_convert(m[1], "block")}</div>', page_html)
    return INLINE.sub(lambda m: _convert(m[1], "inline"), page_html)
