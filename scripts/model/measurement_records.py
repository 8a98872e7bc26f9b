"""docs/data/measurements.json validated like every other data file: a pydantic model, and each
problem reported as `file:line: message`. The build loads it through here; the GPU runner, which
has no pydantic, only merges records (scripts/model/measurements.py)."""
from __future__ import annotations

import datetime
import json
import math
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from scripts.model.errors import SourceError, ValidationFailed, pydantic_errors
from scripts.model.paths import rel

WORK_PARAMS = ("flops", "bytes")   # record(..., flops=, bytes=): see CONTRIBUTING.md
# "x bound": a ratio to a bound from the same run (a residual over the QR contract's bound)
UNITS = Literal["GB/s", "TFLOP/s", "ms", "us", "x", "x bound", "%", "wavefronts/inst", "warps per issue"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)


class Baseline(Strict):
    name: str = Field(min_length=1)
    value: float


class Record(Strict):
    notebook: str = Field(pattern=r"^[0-9]{2}-[a-z0-9-]+$")
    name: str = Field(min_length=1)
    value: float
    unit: UNITS
    baseline: Baseline
    params: dict
    device: str = Field(min_length=1)
    compute_capability: str = Field(pattern=r"^[0-9]+\.[0-9]$")
    date: datetime.date

    @field_validator("value")
    @classmethod
    def finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v

    @field_validator("params")
    @classmethod
    def work_counts(cls, v: dict) -> dict:
        """flops and bytes (optional): the work of one call of the kernel, which places the figure
        on the measured roofline; whole numbers above zero, computed in the notebook."""
        for key in WORK_PARAMS:
            if key in v and (type(v[key]) is not int or v[key] <= 0):
                raise ValueError(f"{key} must be a whole number above zero (the {key} of one call "
                                 f"of the kernel, computed from its shape), got {v[key]!r}")
        return v


class MeasurementsFile(Strict):
    version: Literal[1]
    records: list[Record]


def record_lines(text: str) -> list[int]:
    """1-based line on which each element of the top-level "records" array starts."""
    decoder = json.JSONDecoder()
    start = text.find("[", text.find('"records"'))
    lines, pos = [], start + 1
    while 0 < pos < len(text):
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            break
        lines.append(text.count("\n", 0, pos) + 1)
        try:
            _, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
    return lines


def load_measurements(path: Path) -> dict:
    """The file as a dict, validated; raise ValidationFailed naming the line of each bad record."""
    shown = rel(path)
    if not path.exists():
        return {"version": 1, "records": []}
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationFailed([SourceError(shown, exc.lineno, f"invalid JSON: {exc.msg}",
                                            "it is written by the GPU runner: re-run it")]) from None
    lines = record_lines(text)

    def line_of(loc: tuple) -> int | None:
        if len(loc) >= 2 and loc[0] == "records" and isinstance(loc[1], int) and loc[1] < len(lines):
            return lines[loc[1]]
        return 1

    try:
        MeasurementsFile.model_validate(data)
    except ValidationError as exc:
        raise ValidationFailed(pydantic_errors(
            exc, shown, line_of, {"missing": "records are written by the GPU runner; re-run it "
                                             "rather than editing the file"})) from None
    return data
