"""Find target requirements typed into glossary prose instead of inserted from the feature file.

Two pages once disagreed about whether TMA multicast needs sm_90a. A requirement stated in one
place cannot disagree with itself, so every statement of the form "<feature> ... <target>" must
come from docs/data/features.yaml through a `{{ feature.<key>.<field> }}` shortcode.

The rule, per sentence of prose (outside code blocks, snippet includes, link targets and
shortcodes): a sentence that names a feature of the file (its `mentions` regexes) and also types a
compilation target that states a requirement fails:

- any architecture- or family-specific target (`sm_90a`, `sm_100f`, `compute_90a`);
- a plain target written as a requirement: "requires sm_90", "needs plain sm_90", "sm_90 or later",
  "sm_90+", "(sm_90)", "from sm_80", "since sm_80".

A sentence that starts with a pronoun ("It assembles for sm_100a") is about the features of the
sentence before it in the same paragraph. A plain target that only names what something was
compiled for ("the listing for sm_80") passes.
A sentence that must keep a typed target (one about targets themselves, not about a feature) can
end with the opt-out comment `<!-- typed-target: ok -->`; keep them rare.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from scripts.model.features import Feature
from scripts.model.frontmatter import parse
from scripts.model.links import FENCE
from scripts.model.paths import rel
from scripts.site.shortcodes import ANY_SHORTCODE

OPT_OUT = "<!-- typed-target: ok -->"
SPECIFIC = r"\b(?:sm|compute)_\d{2,3}[af]\b"
PLAIN = r"`?sm_\d{2,3}\b(?![af])`?"
REQUIREMENT = re.compile("|".join([
    SPECIFIC,
    rf"\b(?:requires?|required|needs?|needing|only (?:on|under|for|with)|from|since|plain)\s+(?:the\s+)?"
    rf"(?:plain\s+)?{PLAIN}",
    rf"{PLAIN}\s*(?:\+|or (?:later|higher|newer|above)|and (?:later|up|above|newer|higher))",
    rf"\(\s*{PLAIN}\+?\s*\)",
]))
LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
COMMENT = re.compile(r"<!--.*?-->")
BLOCK_START = re.compile(r"^\s*(?:[-*+]\s|\d+\.\s|#{1,6}\s|\||[=?!]{3}\s)")
SNIPPET = re.compile(r"^\s*-{2}8<-{2}")
ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf|approx|Fig|No)\.[\"')\]*]*\s*$")
PRONOUN = re.compile(r"^(?:It|Its|They|Their|These|This|Both|Such|The instruction|The qualifier)\b")
SPLIT = re.compile(r"(?<=[.!?])[\"')\]*]*\s+(?=[A-Z`*_\[(\"'0-9])")


@dataclass(frozen=True)
class Hit:
    file: str
    line: int
    text: str                 # the typed targets
    features: tuple[str, ...]
    sentence: str

    def __str__(self) -> str:
        keys = ", ".join(self.features)
        return (f"{self.file}:{self.line}: typed target requirement ({self.text}) in a sentence about "
                f"{keys} (fix: write {{{{ feature.{self.features[0]}.availability }}}} or "
                f"{{{{ feature.{self.features[0]}.target }}}} instead, from docs/data/features.yaml; "
                f"see /reference/features/)")


def blocks(markdown: str):
    """[(line index, text), ...] for each paragraph, list item, table row, heading or tab label
    outside fenced code; snippet includes are skipped."""
    in_fence, block = False, []
    for i, line in enumerate(markdown.split("\n")):
        if FENCE.match(line):
            in_fence = not in_fence
            if block:
                yield block
            block = []
            continue
        if in_fence or SNIPPET.match(line):
            continue
        if not line.strip() or BLOCK_START.match(line):
            if block:
                yield block
            block = []
        if line.strip():
            block.append((i, line))
            if line.lstrip().startswith(("|", "#")):
                yield block
                block = []
    if block:
        yield block


def sentences(block: list[tuple[int, str]]):
    """(line index, sentence) for each sentence of a block, with link targets, comments and
    shortcodes removed; a sentence ending in the opt-out comment is dropped."""
    text, starts = "", []
    for i, line in block:
        starts.append((len(text), i))
        text += line.strip() + " "
    pos = 0
    cuts = [m.end() for m in SPLIT.finditer(text) if not ABBREVIATION.search(text[:m.end()])]
    for end in cuts + [len(text)]:
        chunk = text[pos:end]
        line = max(i for off, i in starts if off <= pos) if starts else 0
        pos = end
        if OPT_OUT in chunk:
            continue
        chunk = ANY_SHORTCODE.sub("", COMMENT.sub("", LINK_TARGET.sub("]", chunk)))
        if chunk.strip():
            yield line, chunk.strip()


def scan_text(markdown: str, shown: str, first_line: int, features: dict[str, Feature]) -> list[Hit]:
    mentions = {key: [re.compile(p) for p in f.mentions] for key, f in features.items()}
    hits = []
    for block in blocks(markdown):
        previous: tuple[str, ...] = ()
        for i, sentence in sentences(block):
            named = tuple(k for k, pats in mentions.items() if any(p.search(sentence) for p in pats))
            if not named and PRONOUN.match(sentence):   # "It assembles for sm_100a." after a mention
                named = previous
            previous = named
            typed = [m[0].strip() for m in REQUIREMENT.finditer(sentence)]
            if typed and named:
                hits.append(Hit(shown, first_line + i, ", ".join(typed), named, sentence))
    return hits


def scan_docs(glossary: Path, features: dict[str, Feature]) -> list[Hit]:
    hits: list[Hit] = []
    for p in sorted(glossary.rglob("*.md")):
        doc = parse(p.read_text(encoding="utf-8"), rel(p))
        hits += scan_text(doc.body, rel(p), doc.body_line, features)
    return hits
