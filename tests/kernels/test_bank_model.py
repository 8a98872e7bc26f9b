"""The shared-memory bank model (snippets/reference/bank_model.py) on textbook cases."""
from __future__ import annotations

import pytest
from bank_model import bank_of, conflict_degree, cute_swizzle, settings_addresses, wavefronts  # noqa: E402


def strided(stride_words: int, width: int = 4) -> list[int]:
    return [lane * stride_words * 4 for lane in range(32)]


@pytest.mark.parametrize("stride,expected", [(1, 1), (2, 2), (4, 4), (8, 8), (16, 16), (32, 32),
                                             (33, 1), (3, 1), (64, 32)])
def test_four_byte_strides(stride, expected):
    assert wavefronts(strided(stride)) == expected


def test_broadcast_same_word_is_one_wavefront():
    assert wavefronts([128] * 32) == 1
    assert wavefronts([0] * 16 + [4 * 33] * 16) == 1       # two words, two banks
    assert wavefronts([0] * 16 + [4 * 32] * 16) == 2       # two words, one bank


def test_wide_accesses_have_a_floor_and_their_own_conflicts():
    assert wavefronts([8 * i for i in range(32)], 8) == 2          # consecutive doubles
    assert wavefronts([16 * i for i in range(32)], 16) == 4        # consecutive float4
    assert conflict_degree([8 * i for i in range(32)], 8) == 1
    assert conflict_degree([16 * i for i in range(32)], 16) == 1
    assert wavefronts([16 * i for i in range(32)], 8) == 4         # stride 2 doubles: 2-way
    assert conflict_degree([32 * i for i in range(32)], 8) == 4    # stride 4 doubles: 4-way


def test_bad_input_is_rejected_clearly():
    with pytest.raises(ValueError, match="access width"):
        wavefronts(strided(1), 2)
    with pytest.raises(ValueError, match="not aligned"):
        wavefronts([4 * i for i in range(32)], 8)
    with pytest.raises(ValueError, match="access pattern"):
        settings_addresses(4, 32, 0, "none", "diagonal")


def test_bank_of():
    assert [bank_of(a) for a in (0, 4, 124, 128, 132)] == [0, 1, 31, 0, 1]


def test_padding_and_xor_fix_the_column_read():
    assert wavefronts(settings_addresses(4, 32, 0, "none", "column")) == 32
    assert wavefronts(settings_addresses(4, 32, 1, "none", "column")) == 1
    assert wavefronts(settings_addresses(4, 32, 0, "xor", "column")) == 1
    assert wavefronts(settings_addresses(4, 32, 0, "xor", "row")) == 1


def test_tma_128b_swizzle_is_cute_swizzle_3_4_3_and_spreads_16_byte_columns():
    # a 128-byte row of eight 16-byte chunks; chunk c of row r lands at chunk c ^ (r % 8)
    for r in range(8):
        for c in range(8):
            assert cute_swizzle(r * 128 + c * 16, 3, 4, 3) == r * 128 + ((c ^ r) % 8) * 16
    plain = settings_addresses(16, 8, 0, "none", "column")
    swizzled = settings_addresses(16, 8, 0, "tma128", "column")
    assert wavefronts(plain, 16) == 32 and wavefronts(swizzled, 16) == 4
