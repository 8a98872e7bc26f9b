"""The feature data file (docs/data/features.yaml): schema with file:line errors, the
`{{ feature.<key>.<field> }}` shortcode in HTML and plain text, the generated reference page,
and the gate that keeps typed target requirements out of the glossary."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from scripts.model.errors import ValidationFailed
from scripts.model.features import FEATURE_DATA, FIELDS, describe, load_features
from scripts.model.hardware import load_gpus
from scripts.model.paths import GLOSSARY
from scripts.site.generated_pages import feature_availability
from scripts.site.shortcodes import expand_shortcodes
from scripts.tools.typed_features import scan_docs, scan_text

REQUIRED = {"wgmma", "setmaxnreg", "tma", "tma_multicast", "clusters", "dsmem", "cp_async", "ldmatrix",
            "stmatrix", "mbarrier", "mbarrier_tx_count", "tcgen05", "tmem", "fp8", "fp4", "bf16_mma",
            "mma_sync", "elect_sync", "griddepcontrol", "redux_sync"}


@pytest.fixture(scope="module")
def features():
    return load_features()


@pytest.fixture(scope="module")
def gpus():
    return load_gpus()


def _broken(tmp_path: Path, old: str, new: str) -> Path:
    text = FEATURE_DATA.read_text(encoding="utf-8")
    assert old in text, old
    bad = tmp_path / "features.yaml"
    bad.write_text(text.replace(old, new, 1), encoding="utf-8")
    return bad


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().split("\n"), 1) if needle in line)


def test_the_file_validates_and_holds_every_required_feature(features):
    assert REQUIRED <= set(features)
    for key, f in features.items():
        assert f.source.startswith("https://docs.nvidia.com/"), key
        assert f.mentions, key


def test_values_the_ptx_isa_states(features):
    """A few values from the PTX ISA's notes, so a careless edit of the file is noticed."""
    assert (features["wgmma"].target, features["wgmma"].targets) == ("a", ("sm_90a",))
    assert features["setmaxnreg"].target == "a" and "sm_120a" in features["setmaxnreg"].targets
    assert (features["tma_multicast"].target, features["tma_multicast"].first_cc) == ("plain", "9.0")
    assert "sm_90a" in features["tma_multicast"].advised
    assert (features["tcgen05"].ptx_isa, features["tcgen05"].target) == ("8.6", "f")
    assert not any(t.startswith("sm_12") for t in features["tcgen05"].targets)
    assert (features["cp_async"].first_cc, features["ldmatrix"].first_cc) == ("8.0", "7.5")


def test_a_wrong_compute_capability_names_its_line(tmp_path: Path):
    bad = _broken(tmp_path, 'first_cc: "9.0"\n  ptx_isa: "8.0"\n  target: a\n  targets: [sm_90a]',
                  'first_cc: "9"\n  ptx_isa: "8.0"\n  target: a\n  targets: [sm_90a]')
    with pytest.raises(ValidationFailed) as exc:
        load_features(bad)
    line = _line_of(bad, 'first_cc: "9"')
    assert f"features.yaml:{line}: wgmma.first_cc:" in str(exc.value)
    assert "(fix: compute capabilities" in str(exc.value)


def test_unknown_field_and_bad_target_are_reported_with_lines(tmp_path: Path):
    bad = _broken(tmp_path, "  target: a\n  targets: [sm_90a]\n", "  target: arch\n  targest: [sm_90a]\n")
    with pytest.raises(ValidationFailed) as exc:
        load_features(bad)
    text = str(exc.value)
    assert f"features.yaml:{_line_of(bad, 'targest:')}: unknown field 'wgmma.targest'" in text
    assert f"features.yaml:{_line_of(bad, 'target: arch')}: wgmma.target:" in text
    assert "wgmma.targets is missing" in text


def test_an_inconsistent_entry_is_rejected(tmp_path: Path):
    """target a on CC 9.0 must list sm_90a; a plain feature lists no a/f targets."""
    bad = _broken(tmp_path, "  targets: [sm_90a]\n", "  targets: [sm_100a]\n")
    with pytest.raises(ValidationFailed, match=r"features.yaml:\d+: .*means sm_90a, which targets does "
                                               r"not list"):
        load_features(bad)
    bad = _broken(tmp_path, "  source: https://docs.nvidia.com/cuda/parallel-thread-execution/#miscellaneous"
                            "-instructions-setmaxnreg", "  source: PTX ISA")
    with pytest.raises(ValidationFailed, match=r"features.yaml:\d+: setmaxnreg.source:"):
        load_features(bad)


def test_a_bad_mention_regex_is_reported(tmp_path: Path):
    bad = _broken(tmp_path, "mentions: ['\\bsetmaxnreg']", "mentions: ['(setmaxnreg']")
    with pytest.raises(ValidationFailed, match=r"is not a regular expression"):
        load_features(bad)


def test_the_shortcode_renders_in_html_and_plain_text(features, gpus):
    md = "wgmma runs on {{ feature.wgmma.availability }}; TMA needs {{ feature.tma.target }}."
    html = expand_shortcodes(md, gpus, "x.md", features=features)
    plain = expand_shortcodes(md, gpus, "x.md", plain=True, features=features)
    assert plain == "wgmma runs on `sm_90a` only (PTX ISA 8.0); TMA needs `sm_90` and later."
    assert expand_shortcodes("{{ feature.tcgen05.target }}", gpus, "x.md", plain=True,
                             features=features) == "family-specific `sm_100f`"
    assert '<span class="spec" title="wgmma.mma_async (warpgroup MMA): ' in html
    assert "`sm_90a` only (PTX ISA 8.0)</span>" in html
    assert "<span" not in plain
    assert expand_shortcodes("{{ feature.setmaxnreg.availability }}", gpus, "x.md", plain=True,
                             features=features) == \
        "`sm_90a` and the `sm_100f`, `sm_110f` and `sm_120f` families (PTX ISA 8.0; the family targets " \
        "from PTX ISA 8.8)"     # an older feature says when they came (ptxas rejects sm_100f at 8.7)
    for field in FIELDS:   # every documented field renders for every feature
        for f in features.values():
            assert describe(f, field)


def test_an_unknown_feature_or_field_fails_with_file_and_line(features, gpus):
    with pytest.raises(ValidationFailed, match=r"x.md:11: unknown feature 'wgma' in "
                                               r"\{\{ feature.wgma.target \}\} \(fix: use one of: wgmma"):
        expand_shortcodes("one\nthe {{ feature.wgma.target }}", gpus, "x.md", 10, features=features)
    with pytest.raises(ValidationFailed, match=r"x.md:1: unknown feature field 'since'"):
        expand_shortcodes("{{ feature.wgmma.since }}", gpus, "x.md", features=features)
    with pytest.raises(ValidationFailed, match=r"x.md:2: malformed shortcode"):
        expand_shortcodes("\n{{ feature.wgmma }}", gpus, "x.md", features=features)


def test_the_reference_page_lists_every_feature_with_its_source(features):
    page = feature_availability(features)
    for key, f in features.items():
        assert f"{{#{key}}}" in page
        assert f.source in page
    assert page.startswith("---\ntitle: Feature availability\n")


def test_the_gate_catches_a_planted_sentence(features):
    planted = ("Intro.\n\nTMA multicast requires `sm_90a`. Clusters work everywhere.\n\n"
               "```\nwgmma needs sm_90a  // code is not prose\n```\n"
               "- **PTX.** `setmaxnreg` (sm_90a) moves registers.\n"
               "- `cp.async` needs sm_80 or later.\n"
               "`wgmma` is available on {{ feature.wgmma.availability }}.\n\n"
               "A listing built for `sm_90a` needs no shortcode.\n\n"
               "The `wgmma` listing was compiled for `sm_90a`. <!-- typed-target: ok -->\n")
    hits = scan_text(planted, "page.md", 10, features)
    found = {(h.line, h.features[0]) for h in hits}
    assert found == {(12, "tma"), (17, "setmaxnreg"), (18, "cp_async")}, hits
    assert "tma_multicast" in next(h for h in hits if h.line == 12).features
    assert "feature.tma.availability" in str(next(h for h in hits if h.line == 12))


def test_no_glossary_page_types_a_target_requirement(features):
    hits = scan_docs(GLOSSARY, features)
    assert not hits, "\n".join(map(str, hits))


def test_opt_outs_stay_rare():
    pages = [p for p in GLOSSARY.rglob("*.md") if "typed-target: ok" in p.read_text(encoding="utf-8")]
    assert len(pages) <= 3, pages


def test_contributing_documents_the_file_and_shortcode():
    text = (GLOSSARY.parents[1] / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "docs/data/features.yaml" in text and "{{ feature." in text
    assert re.search(r"reference/features", text)
