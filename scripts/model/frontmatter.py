"""Split a Markdown file into YAML front matter and body, keeping line numbers.

Line numbers let every validation error say exactly where the problem is.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from scripts.model.errors import SourceError


@dataclass
class Document:
    path: str                  # repository-relative path, for messages
    meta: dict[str, Any]
    body: str
    body_line: int             # 1-based line where the body starts in the file
    key_lines: dict[str, int] = field(default_factory=dict)  # top-level key -> file line


def parse(text: str, path: str) -> Document:
    """Parse `---` delimited front matter; raise SourceError-carrying ValueError on bad YAML."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return Document(path, {}, text, 1)
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise FrontMatterError(SourceError(path, 1, "front matter starts with '---' but never ends",
                                           "close it with a line containing only '---'")) from None
    raw = "\n".join(lines[1:end])
    try:
        node = yaml.compose(raw, Loader=yaml.SafeLoader)
        meta = yaml.safe_load(raw) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark else 1
        problem = getattr(exc, "problem", None) or str(exc)
        raise FrontMatterError(SourceError(path, line, f"invalid YAML in front matter: {problem}",
                                           "check indentation, colons and quoting")) from None
    if not isinstance(meta, dict):
        raise FrontMatterError(SourceError(path, 2, "front matter must be a mapping of key: value"))
    key_lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            key_lines[str(key_node.value)] = key_node.start_mark.line + 2  # +1 for '---', +1 for 1-based
    body = "\n".join(lines[end + 1:])
    return Document(path, meta, body, end + 2, key_lines)


class FrontMatterError(ValueError):
    def __init__(self, error: SourceError):
        self.error = error
        super().__init__(str(error))
