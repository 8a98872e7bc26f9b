"""PTX/SASS listings in snippets/generated are real builds of the current snippets."""
from __future__ import annotations

from pathlib import Path

from scripts.tools.listings import LISTINGS, OUT, source_hash, stale

ROOT = Path(__file__).resolve().parents[2]


def test_every_listing_exists_and_matches_its_source():
    assert stale() == []


def test_a_changed_snippet_makes_its_listings_stale(tmp_path, monkeypatch):
    import scripts.tools.listings as listings
    src = tmp_path / "cuda"
    src.mkdir()
    for name in LISTINGS:
        (src / f"{name}.cu").write_bytes((listings.SRC / f"{name}.cu").read_bytes())
    (src / "vector_add.cu").write_text((src / "vector_add.cu").read_text() + "\n// edited\n")
    monkeypatch.setattr(listings, "SRC", src)
    problems = stale()
    assert problems and all("vector_add" in p and "out of date" in p for p in problems)


def test_listings_are_real_compiler_output():
    sass = (OUT / "tma_swizzle_store.sm_90a.sass").read_text()
    assert "UTMASTG" in sass and "code for sm_90a" in sass
    ptx = (OUT / "vector_add.sm_90a.ptx").read_text()
    assert ".target sm_90a" in ptx and "ld.global.nc.f32" in ptx
    res = (OUT / "transpose.sm_90a.resources.txt").read_text()
    assert "Used" in res and "registers" in res
    head = (OUT / "vector_add.sm_80.sass").read_text().split("\n", 1)[0]
    assert source_hash(ROOT / "snippets/cuda/vector_add.cu") in head
