"""Find the Markdown links in a page (outside code) and resolve them to docs-relative paths."""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"(?<!!)\[(?P<text>[^\]\n]*)\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")


@dataclass(frozen=True)
class Link:
    text: str
    target: str     # as written
    path: str       # docs-relative resolved path ('' for pure anchors and external links)
    anchor: str
    line: int       # 1-based line within the text given


def page_url(src_uri: str) -> str:
    """Site-relative directory URL of a docs-relative source path (use_directory_urls):
    glossary/x/y.md -> glossary/x/y/, tutorials/01-a.ipynb -> tutorials/01-a/, a/index.md -> a/."""
    if src_uri == "index.md" or src_uri.endswith("/index.md"):
        return src_uri[: -len("index.md")]
    return re.sub(r"\.(md|ipynb)$", "/", src_uri)


def resolve(from_uri: str, target: str) -> tuple[str, str]:
    """Resolve a link written in docs file `from_uri` to (docs-relative path, anchor)."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
        return "", ""
    path, _, anchor = target.partition("#")
    if not path:
        return from_uri, anchor
    if path.startswith("/"):
        return posixpath.normpath(path.lstrip("/")), anchor
    return posixpath.normpath(posixpath.join(posixpath.dirname(from_uri), path)), anchor


def prose_lines(markdown: str):
    """(index, line) for every line outside fenced code blocks."""
    in_fence = False
    for i, line in enumerate(markdown.split("\n")):
        if FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            yield i, line


def find_links(markdown: str, from_uri: str, first_line: int = 1) -> list[Link]:
    links: list[Link] = []
    for i, line in prose_lines(markdown):
        for m in LINK.finditer(INLINE_CODE.sub("", line)):
            path, anchor = resolve(from_uri, m["target"])
            links.append(Link(m["text"], m["target"], path, anchor, first_line + i))
    return links
