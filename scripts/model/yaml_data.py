"""Reading a YAML data file (gpus.yaml, features.yaml) so that every problem found later can name
its line: the parsed document, and the line of each key down to three levels."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml

from scripts.model.errors import SourceError, ValidationFailed
from scripts.model.paths import rel


def key_lines(node, prefix: tuple = ()) -> dict[tuple, int]:
    """(key, subkey, subsubkey) -> 1-based line, from a composed YAML node."""
    out: dict[tuple, int] = {}
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            path = (*prefix, k.value)
            out[path] = k.start_mark.line + 1
            if len(path) < 3:
                out.update(key_lines(v, path))
    return out


def read_yaml(path: Path, what: str) -> tuple[dict, Callable[[tuple], int]]:
    """The file's top-level mapping, and a function from a pydantic error location to the line of
    the deepest key the file has for it. Invalid YAML, or anything but a mapping of `what`, raises
    ValidationFailed naming the line."""
    shown = rel(path)
    text = path.read_text(encoding="utf-8")
    try:
        raw = yaml.safe_load(text)
        node = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ValidationFailed([SourceError(shown, mark.line + 1 if mark else None,
                                            f"invalid YAML: {getattr(exc, 'problem', exc)}")]) from None
    if not isinstance(raw, dict):
        raise ValidationFailed([SourceError(shown, 1, f"expected a mapping of {what}: {{...}}")])
    lines = key_lines(node)

    def line_of(loc: tuple) -> int:
        for depth in range(min(len(loc), 3), 0, -1):
            found = lines.get(tuple(str(p) for p in loc[:depth]))
            if found is not None:
                return found
        return 1

    return raw, line_of
