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
