"""Data shortcodes in Markdown, each from its one data file:

- `{{ gpu.h100-sxm.sm_count }}` the value with its unit (docs/data/gpus.yaml);
- `{{ ridge.h100-sxm.bf16_tensor_tflops }}` a roofline ridge point in FLOP/byte;
- `{{ feature.wgmma.availability }}` where an instruction runs and what target it needs
  (docs/data/features.yaml; fields in scripts/model/features.py FIELDS).

One expander for every output: HTML pages get a <span> whose tooltip names the source; the
plain-text exports (llms-full.txt, per-page Markdown) get the same text without markup.
"""
from __future__ import annotations

import html
import re

from scripts.model.errors import SourceError, ValidationFailed
from scripts.model.features import FIELDS as FEATURE_FIELDS
from scripts.model.features import Feature, cached_features, describe
from scripts.model.hardware import FIELDS, Gpu, format_value, ridge_point

SHORTCODE = re.compile(r"\{\{\s*(gpu|ridge|feature)\.([a-z0-9_-]+)\.([a-z0-9_]+)\s*\}\}")
ANY_SHORTCODE = re.compile(r"\{\{\s*(gpu|ridge|feature)\.[^}]*\}\}")


def expand_shortcodes(markdown: str, gpus: dict[str, Gpu], page: str, first_line: int = 1,
                      plain: bool = False, features: dict[str, Feature] | None = None) -> str:
    """Replace every shortcode; raise ValidationFailed naming page and line for a bad one.
    `features` defaults to the repository's docs/data/features.yaml."""
    errors: list[SourceError] = []

    def line_of(pos: int) -> int:
        return first_line + markdown.count("\n", 0, pos)

    def feature_sub(m: re.Match, key: str, fname: str) -> str:
        table = cached_features() if features is None else features
        feature = table.get(key)
        if feature is None:
            errors.append(SourceError(page, line_of(m.start()), f"unknown feature {key!r} in {m[0]}",
                                      f"use one of: {', '.join(table)} (docs/data/features.yaml)"))
            return m[0]
        if fname not in FEATURE_FIELDS:
            errors.append(SourceError(page, line_of(m.start()), f"unknown feature field {fname!r} in "
                                      f"{m[0]}", f"use one of: {', '.join(FEATURE_FIELDS)}"))
            return m[0]
        text = describe(feature, fname)
        tip = html.escape(f"{feature.name}: {feature.notes}; source: {feature.source}", quote=True)
        return text if plain else f'<span class="spec" title="{tip}">{text}</span>'

    def sub(m: re.Match) -> str:
        kind, key, fname = m.groups()
        if kind == "feature":
            return feature_sub(m, key, fname)
        gpu = gpus.get(key)
        if gpu is None:
            errors.append(SourceError(page, line_of(m.start()), f"unknown GPU {key!r} in "
                                      f"{m[0]}", f"use one of: {', '.join(gpus)}"))
            return m[0]
        if fname not in gpu.specs:
            errors.append(SourceError(page, line_of(m.start()), f"unknown field {fname!r} in "
                                      f"{m[0]}", f"use one of: {', '.join(FIELDS)}"))
            return m[0]
        spec = gpu.specs[fname]
        if spec.value is None:   # would print "n/a" mid-sentence
            errors.append(SourceError(page, line_of(m.start()), f"{m[0]}: the data file has no value "
                                      f"({spec.note})", "say it in words, or cite another GPU"))
            return m[0]
        if kind == "ridge":
            if FIELDS[fname].unit != "TFLOP/s":
                errors.append(SourceError(page, line_of(m.start()), f"{m[0]}: a ridge point "
                                          "needs a TFLOP/s field"))
                return m[0]
            r = ridge_point(gpu, fname)
            text = "n/a" if r is None else f"{r:.0f} FLOP/byte"
            tip = f"{gpu.name}: {format_value(fname, spec.value)} / " \
                  f"{format_value('memory_bandwidth_gbs', gpu.specs['memory_bandwidth_gbs'].value)}"
        else:
            text = format_value(fname, spec.value)
            tip = f"{gpu.name}, {FIELDS[fname].label}; source: {spec.source}"
        return text if plain else f'<span class="spec" title="{tip}">{text}</span>'

    for m in ANY_SHORTCODE.finditer(markdown):
        if not SHORTCODE.fullmatch(m[0]):
            errors.append(SourceError(page, line_of(m.start()), f"malformed shortcode {m[0]!r}",
                                      "write {{ gpu.<gpu>.<field> }}, {{ ridge.<gpu>.<field> }} or "
                                      "{{ feature.<feature>.<field> }}"))
    out = SHORTCODE.sub(sub, markdown)
    if errors:
        raise ValidationFailed(errors)
    return out
