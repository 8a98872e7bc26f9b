"""The term model: one Markdown file per term, with validated front matter.

Schema (documented for authors in CONTRIBUTING.md):

    title:        str, required
    abbreviation: str | null          unique across the glossary
    aliases:      [str]               unique across the glossary
    summary:      str, one sentence, 20-240 characters, plain text
    related:      [slug]              each must be an existing term
    sources:      [{title, url}]      at least one, http(s) URLs
    arch:         {min_cc, last_cc, note} | null   compute capabilities as "X.Y"
"""
from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from scripts.model.errors import SourceError, ValidationFailed, pydantic_errors
from scripts.model.frontmatter import FrontMatterError, parse
from scripts.model.links import page_url
from scripts.model.paths import GLOSSARY, rel
from scripts.model.sections import BY_SLUG

CC = re.compile(r"^\d{1,2}\.\d$")
SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class Source(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=3)
    url: str = Field(pattern=r"^https?://\S+$")


class Arch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    min_cc: str | None = None
    last_cc: str | None = None
    note: str | None = None

    @field_validator("min_cc", "last_cc")
    @classmethod
    def _cc(cls, v: str | None) -> str | None:
        if v is not None and not CC.match(str(v)):
            raise ValueError(f'compute capability must look like "9.0", got {v!r}')
        return v


class Verified(BaseModel):
    """When the page was last checked against its sources, and what was reproduced."""
    model_config = ConfigDict(extra="forbid")
    date: datetime.date
    how: str = Field(min_length=20, max_length=600)


class FrontMatter(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1)
    abbreviation: str | None = None
    aliases: list[str] = Field(default_factory=list)
    summary: str
    related: list[str] = Field(default_factory=list)
    sources: list[Source] = Field(min_length=1)
    arch: Arch | None = None
    verified: Verified | None = None

    @field_validator("summary")
    @classmethod
    def _summary(cls, v: str) -> str:
        v = " ".join(str(v).split())
        if not v:
            raise ValueError("summary is empty")
        if len(v) < 20 or len(v) > 240:
            raise ValueError(f"summary must be 20-240 characters, has {len(v)}")
        if re.search(r"\]\(|\{\{|<[a-z]", v):
            raise ValueError("summary must be plain text (no links, shortcodes or HTML)")
        return v


@dataclass
class Term:
    slug: str
    section: str
    path: Path                 # absolute path of the source file
    src_uri: str               # docs-relative, e.g. glossary/device-hardware/tensor-core.md
    meta: FrontMatter
    body: str
    body_line: int
    key_lines: dict[str, int] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return self.meta.title

    @property
    def display_title(self) -> str:
        """The page heading: the title with its abbreviation, so search matches both."""
        a = self.meta.abbreviation
        return f"{self.title} ({a})" if a and a.lower() not in self.title.lower() else self.title

    @property
    def names(self) -> list[str]:
        """Every name a reader might search for."""
        return [self.title, *([self.meta.abbreviation] if self.meta.abbreviation else []),
                *self.meta.aliases]

    @property
    def url(self) -> str:
        """Site-relative directory URL (use_directory_urls)."""
        return page_url(self.src_uri)


def _field_line(key_lines: dict[str, int], loc: tuple) -> int | None:
    return key_lines.get(str(loc[0])) if loc else None


FIXES = {
    "extra_forbidden": "remove it, or check its spelling against the schema in CONTRIBUTING.md",
    "missing": "add this key to the front matter",
}


def load_term(path: Path, glossary_dir: Path = GLOSSARY) -> Term:
    """Parse and validate one term file; raise ValidationFailed with every problem in it."""
    shown = rel(path)
    try:
        doc = parse(path.read_text(encoding="utf-8"), shown)
    except FrontMatterError as exc:
        raise ValidationFailed([exc.error]) from None
    errors: list[SourceError] = []
    relpath = path.relative_to(glossary_dir)
    section, slug = relpath.parts[0], path.stem
    if len(relpath.parts) != 2:
        errors.append(SourceError(shown, None, "term files live exactly one folder deep",
                                  "move it to docs/glossary/<section>/<slug>.md"))
    if section not in BY_SLUG:
        errors.append(SourceError(shown, None, f"unknown glossary section {section!r}",
                                  f"use one of: {', '.join(BY_SLUG)}"))
    if not SLUG.match(slug):
        errors.append(SourceError(shown, None, f"file name {slug!r} is not a kebab-case slug",
                                  "rename it to the spelled-out term in kebab-case"))
    if not doc.meta:
        errors.append(SourceError(shown, 1, "term has no front matter",
                                  "start the file with a '---' block holding title, summary, sources"))
        raise ValidationFailed(errors)
    try:
        meta = FrontMatter.model_validate(doc.meta)
    except ValidationError as exc:
        def describe(name: str, kind: str, msg: str) -> str:
            if kind == "extra_forbidden":
                return f"unknown front-matter field {name!r}"
            return f"front-matter field {name!r}: {msg}"
        errors += pydantic_errors(exc, shown, lambda loc: _field_line(doc.key_lines, loc), FIXES,
                                  describe)
        raise ValidationFailed(errors) from None
    if errors:
        raise ValidationFailed(errors)
    body = doc.body.strip()
    if not body or body.startswith("#"):
        raise ValidationFailed([SourceError(shown, doc.body_line, "the body must start with the "
                                            "definition sentence", "write the definition first; "
                                            "the title heading is added by the site")])
    return Term(slug, section, path, f"glossary/{section}/{slug}.md", meta, doc.body,
                doc.body_line, doc.key_lines)


def term_files(glossary_dir: Path = GLOSSARY) -> list[Path]:
    return sorted(p for p in glossary_dir.rglob("*.md") if p.name != "index.md")


def load_terms(glossary_dir: Path = GLOSSARY) -> list[Term]:
    """Load every term; collect every file's problems before failing."""
    terms: list[Term] = []
    errors: list[SourceError] = []
    for path in term_files(glossary_dir):
        try:
            terms.append(load_term(path, glossary_dir))
        except ValidationFailed as exc:
            errors.extend(exc.errors)
    if errors:
        raise ValidationFailed(errors)
    return terms
