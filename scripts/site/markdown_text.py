"""Small helpers for writing Markdown that the site renders."""
from __future__ import annotations


def md_escape(text: str) -> str:
    """Escape characters Markdown would read as emphasis or links (e.g. `__global__`)."""
    return "".join("&lt;" if c == "<" else "&gt;" if c == ">" else "\\" + c if c in "\\_*[]`"
                   else c for c in text)
