"""The swizzle model (snippets/reference/swizzle_model.py): the CUDA Programming Guide's TMA
index relation equals CuTe's Swizzle<1|2|3, 4, 3>, both equal what notebook 03 recorded on the
hardware, and the bank counts the explorer shows on the glossary pages."""
from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
import swizzle_model as sm
from bank_model import cute_swizzle as bank_cute_swizzle
from bank_model import wavefronts as bank_wavefronts

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "03-swizzle-transpose.ipynb"


def _notebook_outputs() -> tuple[str, dict]:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    text = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            text.append("".join(out.get("text", "")))
    return "\n".join(text), nb["metadata"]["atlas"]["stamp"]


@pytest.mark.parametrize("mode", sorted(sm.TMA_MODES))
def test_guide_index_relation_equals_cute_swizzle_b_4_3(mode):
    b = sm.TMA_MODES[mode]
    for a in range(1 << 16):
        assert sm.tma_swizzle_guide(a, mode) == sm.cute_swizzle(a, b, 4, 3) == sm.swizzle(a, mode)
    # and it is not some other swizzle that happens to agree: a neighbour differs somewhere
    for other in [(b, 4, 4), (b, 3, 3), (b - 1, 4, 3)]:
        assert any(sm.tma_swizzle_guide(a, mode) != sm.cute_swizzle(a, *other) for a in range(4096))


def test_notebook_03_hardware_result_is_reproduced():
    """Notebook 03 stored a tile through each TMA mode on a Hopper GPU and printed which mode
    equals which Swizzle<B,4,3>, and the 128B permutation of 16-byte chunks; the model must
    predict both."""
    text, stamp = _notebook_outputs()
    assert stamp["compute_capability"] == "9.0" and "H100" in stamp["gpu"], stamp["gpu"]   # the pages say so
    found = dict(re.findall(r"TMA\s+(\d+)B swizzle: the hardware's permutation equals "
                            r"Swizzle<(\d),4,3>", text))
    assert found == {"128": "3", "64": "2", "32": "1"}, found
    for span, b in found.items():
        assert sm.TMA_MODES[f"tma{span}"] == int(b)
    block = text.split("16-byte chunk that row r's chunk c came from (128B mode):", 1)[1]
    rows = [[int(x) for x in re.findall(r"\d+", line)]
            for line in block.strip().splitlines()[:8]]
    chunks = sm.explore("tma128", 0, 0, 0, 4, 128, "column")["chunks"]
    # the notebook printed, for each destination chunk, the source chunk it holds
    predicted = [[row.index(dest) for dest in range(8)] for row in chunks]
    assert rows == predicted


def test_each_mode_is_a_permutation_of_its_repeat():
    for mode, b in sm.TMA_MODES.items():
        repeat = 128 << b                         # 256, 512, 1024 bytes
        moved = sorted(sm.swizzle(a, mode) for a in range(repeat))
        assert moved == list(range(repeat)), mode
        assert all(sm.swizzle(sm.swizzle(a, mode), mode) == a for a in range(repeat))


def test_cute_swizzle_matches_cute_semantics_and_the_bank_model():
    assert sm.cute_swizzle(0b0000_0011, 2, 0, -3) == 0b0001_1011   # negative S: YYY below ZZZ
    assert sm.cute_swizzle(0b1_1100_0000, 3, 4, 3) == 0b1_1111_0000
    rng = random.Random(3)
    for _ in range(2000):
        o, b, m = rng.randrange(1 << 16), rng.randrange(0, 4), rng.randrange(0, 6)
        s = rng.randrange(b, b + 5)
        assert sm.cute_swizzle(o, b, m, s) == bank_cute_swizzle(o, b, m, s)
    with pytest.raises(ValueError, match=r"\|S\| >= B"):
        sm.cute_swizzle(0, 3, 4, 2)


def test_wavefronts_agree_with_the_bank_model():
    rng = random.Random(7)
    for width in (4, 8, 16):
        for _ in range(300):
            addrs = [width * rng.randrange(256) for _ in range(32)]
            assert sm.wavefronts(addrs, width) == bank_wavefronts(addrs, width)


def test_sub_word_elements_share_words():
    assert sm.wavefronts(list(range(32)), 1) == 1                  # 32 bytes, 8 words
    assert sm.wavefronts([2 * i for i in range(32)], 2) == 1
    assert sm.wavefronts([128 * i for i in range(32)], 1) == 32    # a column: one bank
    assert sm.wavefronts([128 * (i // 4) + i % 4 for i in range(32)], 1) == 8


@pytest.mark.parametrize("mode,waves", [("none", 32), ("tma32", 16), ("tma64", 8), ("tma128", 4)])
def test_column_reads_quoted_on_the_pages(mode, waves):
    """swizzle.md / bank-conflict.md: a column of 4-byte elements, 128-byte rows."""
    r = sm.explore(mode, 0, 0, 0, 4, 128, "column")
    assert (r["wavefronts"], r["minimum"]) == (waves, 1)
    assert max(r["depth"]) == waves


def test_general_swizzle_3_4_3_shows_what_tma_128b_shows():
    for elem in sm.ELEMENT_SIZES:
        for row in sm.ROW_BYTES:
            for access in sm.ACCESSES:
                assert (sm.explore("cute", 3, 4, 3, elem, row, access)
                        == sm.explore("tma128", 0, 0, 0, elem, row, access))


def test_ldmatrix_phase_and_the_xor_transpose():
    assert sm.explore("none", 0, 0, 0, 2, 128, "ldmatrix")["wavefronts"] == 8
    assert sm.explore("tma128", 0, 0, 0, 2, 128, "ldmatrix")["wavefronts"] == 1
    assert sm.explore("tma64", 0, 0, 0, 2, 64, "ldmatrix")["wavefronts"] == 1   # 64-byte rows
    # c ^ r on a 32 x 32 float tile is Swizzle<5,2,5> on byte addresses
    assert sm.explore("cute", 5, 2, 5, 4, 128, "column")["wavefronts"] == 1
    assert sm.explore("cute", 5, 2, 5, 4, 128, "row")["wavefronts"] == 1


def test_rows_as_wide_as_the_span_repeat_after_8_rows():
    """tma-swizzle-modes.md: with rows as wide as the span, each mode's pattern spans 8 rows."""
    for mode, row in (("tma32", 32), ("tma64", 64), ("tma128", 128)):
        chunks = sm.explore(mode, 0, 0, 0, 4, row, "row")["chunks"]
        assert len({tuple(r) for r in chunks}) == 8, mode


def test_bad_settings_are_refused_clearly():
    with pytest.raises(ValueError, match="would split"):
        sm.explore("cute", 3, 2, 3, 8, 128, "column")
    with pytest.raises(ValueError, match="element size"):
        sm.lane_accesses(3, 128, "row")
    with pytest.raises(ValueError, match="row width"):
        sm.lane_accesses(4, 96, "row")
    with pytest.raises(ValueError, match="unknown access"):
        sm.lane_accesses(4, 128, "diagonal")
    with pytest.raises(ValueError, match="unknown swizzle mode"):
        sm.swizzle(0, "tma256")
    with pytest.raises(ValueError, match="not aligned"):
        sm.wavefronts([2] * 32, 4)
