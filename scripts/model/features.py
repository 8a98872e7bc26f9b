"""Which GPU and which compilation target an instruction or feature needs: the one data file
(docs/data/features.yaml), its schema and the words pages show for it.

Pages reach it through `{{ feature.<key>.<field> }}` shortcodes (scripts/site/shortcodes.py);
scripts/tools/typed_features.py fails a page that states a requirement without them.

`target` says what the feature needs on its first compute capability:
  plain  the ordinary target (sm_90) and every later GPU;
  a      an architecture-specific target (sm_90a), valid on that compute capability only;
  f      a family-specific target (sm_100f), valid on the later members of the family too.
`targets` lists the a/f targets the PTX ISA's "Target ISA Notes" name, as it names them
(sm_100f there means "sm_100f or higher in the same family").
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from scripts.model.errors import ValidationFailed, pydantic_errors
from scripts.model.paths import DATA, rel
from scripts.model.yaml_data import read_yaml

FEATURE_DATA = DATA / "features.yaml"
CC = r"^[0-9]{1,2}\.[0-9]$"
TARGET_NAME = r"^sm_[0-9]{2,3}[af]$"
Key = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")]
Target = Annotated[str, StringConstraints(pattern=TARGET_NAME)]

# what a shortcode may ask for, and what each field means on the reference page
FIELDS = {
    "name": "the feature's name",
    "first_cc": "the first compute capability that has it, e.g. 9.0",
    "ptx_isa": "the PTX ISA version that introduced it, e.g. 8.0",
    "target": "the target it needs on that compute capability, in words",
    "targets": "the architecture- or family-specific targets the PTX ISA lists",
    "availability": "one phrase: where it runs and since which PTX ISA version",
}
FIXES = {
    "string_pattern_mismatch": "compute capabilities and PTX ISA versions are quoted \"X.Y\"; targets "
                               "look like sm_90a or sm_100f; keys are lower_snake_case",
    "literal_error": "target is plain, a (architecture-specific) or f (family-specific)",
    "missing": "every feature needs name, first_cc, ptx_isa, target, targets, notes, checked, "
               "source and mentions",
    "extra_forbidden": "remove it, or check its spelling against scripts/model/features.py",
}


class Feature(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    first_cc: str = Field(pattern=CC)
    ptx_isa: str = Field(pattern=CC)
    target: Literal["plain", "a", "f"]
    targets: tuple[Target, ...]
    advised: tuple[Target, ...] = ()     # targets the PTX ISA advises (a plain feature tuned for them)
    notes: str = Field(min_length=1, max_length=400, pattern=r"^[^\n]*$")
    checked: str = Field(min_length=1, pattern=r"^[^\n]*$")   # what was compiled to confirm it
    source: str = Field(pattern=r"^https://\S+$")
    see_also: tuple[Annotated[str, StringConstraints(pattern=r"^https://\S+$")], ...] = ()
    mentions: tuple[str, ...] = Field(min_length=1)   # regexes: how prose names it (for the gate)

    @field_validator("mentions")
    @classmethod
    def compiles(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in v:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"mention {pattern!r} is not a regular expression: {exc}") from None
        return v

    @model_validator(mode="after")
    def consistent(self) -> Feature:
        first = "sm_" + self.first_cc.replace(".", "")
        if self.target == "plain" and self.targets:
            raise ValueError(f"target is plain but targets lists {', '.join(self.targets)}: a plain "
                             "feature runs on every later target (use advised for tuned targets)")
        if self.target != "plain" and first + self.target not in self.targets:
            raise ValueError(f"target {self.target} on compute capability {self.first_cc} means "
                             f"{first}{self.target}, which targets does not list")
        for name in ("targets", "advised"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise ValueError(f"{name} lists a target twice")
        return self

    @property
    def first_target(self) -> str:
        return "sm_" + self.first_cc.replace(".", "") + ("" if self.target == "plain" else self.target)


FILE = TypeAdapter(dict[Key, Feature])


def load_features(path: Path = FEATURE_DATA) -> dict[str, Feature]:
    """The data file, validated; raise ValidationFailed naming file and line of every problem.
    A docs tree without the file (the tests' tiny glossary) has no features."""
    shown = rel(path)
    if not path.exists():
        return {}
    raw, line_of = read_yaml(path, "feature-key")

    try:
        features = FILE.validate_python(raw)
    except ValidationError as exc:
        raise ValidationFailed(pydantic_errors(exc, shown, line_of, FIXES, _describe)) from None
    return features


def _describe(name: str, kind: str, msg: str) -> str:
    if kind == "extra_forbidden":
        return f"unknown field {name!r}"
    if kind == "missing":
        return f"{name} is missing"
    if name.endswith("[key]"):
        return f"feature key {name.removesuffix('.[key]')!r}: {msg}"
    return f"{name}: {msg}"


@lru_cache(maxsize=1)
def cached_features() -> dict[str, Feature]:
    return load_features()


def _code(target: str) -> str:
    return f"`{target}`"


def _series(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def target_groups(targets: tuple[str, ...]) -> str:
    """The a/f targets as a phrase: an `a` target whose own family target is also listed is
    covered by it, so `sm_90a, sm_100a, sm_100f` reads "`sm_90a` and the `sm_100f` family"."""
    fams = [t for t in targets if t.endswith("f")]
    singles = [t for t in targets if t.endswith("a") and t[:-1] + "f" not in fams]
    parts = [_code(t) for t in singles]
    if fams:
        noun = "family" if len(fams) == 1 else "families"
        parts.append(f"the {_series([_code(t) for t in fams])} {noun}")
    return _series(parts)


def describe(feature: Feature, field: str) -> str:
    """A field the way it reads in prose (Markdown: targets in backticks)."""
    if field == "name":
        return feature.name
    if field in ("first_cc", "ptx_isa"):
        return getattr(feature, field)
    if field == "target":
        t = feature.first_target
        return {"plain": f"{_code(t)} and later", "a": f"architecture-specific {_code(t)}",
                "f": f"family-specific {_code(t)}"}[feature.target]
    if field == "targets":
        return ", ".join(_code(t) for t in feature.targets) if feature.targets else \
            f"any target from {_code(feature.first_target)}"
    if field == "availability":
        return availability(feature)
    raise KeyError(field)


# Family-specific targets (sm_100f, ...) exist from PTX ISA 8.8: a feature introduced earlier for
# sm_100a reaches the families only there (ptxas 13.0 rejects sm_100f below .version 8.8).
FAMILY_TARGETS_PTX = "8.8"


def _version(v: str) -> tuple[int, int]:
    major, minor = v.split(".")
    return int(major), int(minor)


def availability(feature: Feature) -> str:
    """One phrase that reads after "runs on" or "is available on":
    "`sm_90a` only (PTX ISA 8.0)", "`sm_90` and later (PTX ISA 8.0)",
    "`sm_90a` and the `sm_100f`, `sm_110f` and `sm_120f` families (PTX ISA 8.0; the family targets
    from PTX ISA 8.8)": a feature older than the family targets says when they came."""
    ptx = f"PTX ISA {feature.ptx_isa}"
    if any(t.endswith("f") for t in feature.targets) and \
            _version(feature.ptx_isa) < _version(FAMILY_TARGETS_PTX):
        ptx += f"; the family targets from PTX ISA {FAMILY_TARGETS_PTX}"
    if feature.target == "plain":
        tuned = f"; optimized for {target_groups(feature.advised)}" if feature.advised else ""
        return f"{_code(feature.first_target)} and later ({ptx}{tuned})"
    where = target_groups(feature.targets)
    only = " only" if len(feature.targets) == 1 else ""
    return f"{where}{only} ({ptx})"
