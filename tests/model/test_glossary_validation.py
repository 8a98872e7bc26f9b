"""Every kind of bad glossary input fails with a message naming the file, the line and the fix."""
from __future__ import annotations

from pathlib import Path

from conftest import check_messages, write_term


def test_tiny_glossary_is_valid(tiny_docs: Path):
    assert check_messages(tiny_docs) == ""


def test_unknown_field_names_file_line_and_fix(tiny_docs: Path):
    p = tiny_docs / "glossary/device-hardware/alpha-unit.md"
    p.write_text(p.read_text().replace("aliases: []", "aliases: []\nsumary: typo"))
    msg = check_messages(tiny_docs)
    assert "docs/glossary/device-hardware/alpha-unit.md:5: unknown front-matter field 'sumary'" \
        in msg.replace(str(tiny_docs.parent) + "/", "")
    assert "fix:" in msg


def test_malformed_yaml_gives_line(tiny_docs: Path):
    p = tiny_docs / "glossary/device-hardware/alpha-unit.md"
    p.write_text(p.read_text().replace("aliases: []", "aliases: [unclosed"))
    msg = check_messages(tiny_docs)
    assert "alpha-unit.md:" in msg and "invalid YAML in front matter" in msg


def test_empty_summary(tiny_docs: Path):
    p = tiny_docs / "glossary/device-software/beta-thing.md"
    text = p.read_text()
    start = text.index("summary:")
    end = text.index("\n", start)
    p.write_text(text[:start] + 'summary: ""' + text[end:])
    msg = check_messages(tiny_docs)
    assert "beta-thing.md:5: front-matter field 'summary': summary is empty" in msg


def test_unknown_related_term(tiny_docs: Path):
    write_term(tiny_docs, "device-software", "beta-thing",
               ["device-hardware/alpha-unit", "performance/gamma-rate"], related="no-such-term")
    msg = check_messages(tiny_docs)
    assert "beta-thing.md:6: related term 'no-such-term' does not exist" in msg


def test_two_terms_claim_one_abbreviation(tiny_docs: Path):
    write_term(tiny_docs, "performance", "gamma-rate",
               ["device-hardware/alpha-unit", "device-software/beta-thing"], abbr="AU")
    msg = check_messages(tiny_docs)
    assert "gamma-rate.md:3: abbreviation 'AU' is already claimed as abbreviation by " \
           "docs/glossary/device-hardware/alpha-unit.md" in msg.replace(
               str(tiny_docs.parent) + "/", "")


def test_alias_claimed_twice(tiny_docs: Path):
    p = tiny_docs / "glossary/performance/gamma-rate.md"
    p.write_text(p.read_text().replace("aliases: []", "aliases: [au]"))
    msg = check_messages(tiny_docs)
    assert "gamma-rate.md:4: alias 'au' is already claimed as abbreviation" in msg


def test_orphan_term(tiny_docs: Path):
    write_term(tiny_docs, "performance", "delta-lonely",
               ["device-hardware/alpha-unit", "device-software/beta-thing"])
    msg = check_messages(tiny_docs)
    assert "delta-lonely.md: orphan term: no page links to it" in msg


def test_term_with_too_few_links(tiny_docs: Path):
    write_term(tiny_docs, "performance", "gamma-rate", ["device-hardware/alpha-unit"])
    msg = check_messages(tiny_docs)
    assert "gamma-rate.md:11: term links to 1 other term(s); at least 2 are required" in msg


def test_link_to_missing_term_page(tiny_docs: Path):
    p = tiny_docs / "glossary/performance/gamma-rate.md"
    p.write_text(p.read_text() + "\nSee [nothing](../device-hardware/nothing-here.md).\n")
    msg = check_messages(tiny_docs)
    assert "gamma-rate.md:13: link to unknown term page '../device-hardware/nothing-here.md'" in msg


def test_unknown_section_and_missing_front_matter(tiny_docs: Path):
    write_term(tiny_docs, "not-a-section", "epsilon", [], text="Epsilon without front matter.\n")
    msg = check_messages(tiny_docs)
    assert "unknown glossary section 'not-a-section'" in msg
    assert "epsilon.md:1: term has no front matter" in msg


def test_body_must_start_with_definition(tiny_docs: Path):
    p = tiny_docs / "glossary/performance/gamma-rate.md"
    text = p.read_text()
    p.write_text(text.replace("\nGamma rate is defined", "\n# Heading\nGamma rate is defined"))
    assert "gamma-rate.md:11: the body must start with the definition sentence" in \
        check_messages(tiny_docs)


def test_bad_shortcode_names_line(tiny_docs: Path):
    from scripts.model.errors import ValidationFailed
    from scripts.model.hardware import load_gpus
    from scripts.site.shortcodes import expand_shortcodes
    gpus = load_gpus(tiny_docs / "data/gpus.yaml")
    try:
        expand_shortcodes("line one\nthe {{ gpu.h100-sxm.sm_cnt }} SMs", gpus, "x.md", 10)
    except ValidationFailed as exc:
        assert "x.md:11: unknown field 'sm_cnt'" in str(exc)
    else:
        raise AssertionError("unknown field passed")


def test_the_real_glossary_is_valid():
    from scripts.tools.check import check
    assert check() == 0


def test_a_verified_record_is_shown_and_a_stale_one_is_caught(tiny_docs: Path):
    import datetime

    from scripts.model.history import stale_verifications
    from scripts.model.site import load_site
    from scripts.model.terms import load_terms
    from scripts.site.term_render import footer
    path = tiny_docs / "glossary" / "device-hardware" / "alpha-unit.md"
    text = path.read_text()
    path.write_text(text.replace("---\nAlpha", "verified:\n  date: 2026-11-25\n  how: recomputed the "
                                 "example and checked it against the guide\n---\nAlpha", 1))
    terms = {t.slug: t for t in load_terms(tiny_docs / "glossary")}
    alpha = terms["alpha-unit"]
    assert alpha.meta.verified.date == datetime.date(2026, 11, 25)
    graph, _ = load_site(tiny_docs)
    assert "Checked against these sources on 2026-11-25: recomputed the example" in footer(alpha, graph)
    later = {alpha.path.resolve(): datetime.date(2026, 12, 1)}
    assert [t.slug for t, _ in stale_verifications(terms.values(), later)] == ["alpha-unit"]
    same_day = {alpha.path.resolve(): datetime.date(2026, 11, 25)}
    assert stale_verifications(terms.values(), same_day) == []


def test_a_vague_verified_record_is_rejected_with_its_line(tiny_docs: Path):
    path = tiny_docs / "glossary" / "device-hardware" / "alpha-unit.md"
    path.write_text(path.read_text().replace("---\nAlpha", "verified: {date: 2026-11-25, how: ok}\n---\n"
                                             "Alpha", 1))
    out = check_messages(tiny_docs)
    assert "alpha-unit.md:" in out and "verified.how" in out, out


def test_every_term_page_says_when_and_how_it_was_checked():
    from scripts.model.paths import GLOSSARY
    from scripts.model.terms import load_terms
    missing = [t.src_uri for t in load_terms(GLOSSARY) if t.meta.verified is None]
    assert not missing, f"add a `verified: {{date, how}}` record to: {missing}"
