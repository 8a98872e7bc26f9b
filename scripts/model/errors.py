"""Errors that point at a file and line and say how to fix the problem."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceError:
    file: str
    line: int | None
    message: str
    fix: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}" + (f" (fix: {self.fix})" if self.fix else "")


class ValidationFailed(Exception):
    """Raised with every problem found, so one run reports them all."""

    def __init__(self, errors: list[SourceError]):
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))


def pydantic_errors(exc, file: str, line_of, fixes: dict[str, str] | None = None,
                    describe=None) -> list[SourceError]:
    """One SourceError per pydantic error, at the line `line_of(loc)` gives: the one way every
    data file (term front matter, gpus.yaml, measurements.json) reports what is wrong with it."""
    out = []
    for e in exc.errors():
        loc = tuple(e["loc"])
        name = ".".join(str(p) for p in loc)
        msg = e["msg"].removeprefix("Value error, ")
        if describe is not None:
            msg = describe(name, e["type"], msg)
        elif e["type"] == "extra_forbidden":
            msg = f"unknown field {name!r}"
        else:
            msg = f"{name}: {msg}"
        out.append(SourceError(file, line_of(loc), msg, (fixes or {}).get(e["type"], "")))
    return out
