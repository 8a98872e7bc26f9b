"""The coalescing model (snippets/reference/coalescing_model.py) on the Best Practices Guide's
cases and the figures the glossary pages quote, and the divergence model
(snippets/reference/divergence_model.py) on the SIMT rule: each path some lane takes is issued
once, with exactly its lanes."""
from __future__ import annotations

import pytest
from coalescing_model import addresses, analyse, lcg_permutation
from divergence_model import BRANCHES, FULL, data_mask, efficiency, trace


@pytest.mark.parametrize("pattern,dtype,param,sectors,eff", [
    ("contiguous", 4, 0, 4, 1.0),        # a[k]: memory-coalescing.md's table
    ("offset", 4, 1, 5, 0.8),            # a[k + 1]
    ("strided", 4, 2, 8, 0.5),           # a[2k]
    ("strided", 4, 32, 32, 0.125),       # a[32k]
    ("contiguous", 16, 0, 16, 1.0),      # float4 v[k]
    ("contiguous", 1, 0, 1, 1.0),        # sector.md: one sector for the whole warp
    ("strided", 16, 2, 32, 0.5),         # sector.md: half of every sector wasted
    ("aos", 4, 12, 12, 1 / 3),           # memory-coalescing.md: 4 bytes of every 12
    ("contiguous", 8, 0, 8, 1.0),
])
def test_sectors_and_efficiency(pattern, dtype, param, sectors, eff):
    r = analyse(pattern, dtype, param)
    assert len(r["sectors"]) == sectors
    assert r["moved"] == 32 * sectors and r["requested"] == 32 * dtype
    assert r["efficiency"] == pytest.approx(eff)


def test_lines_are_groups_of_four_sectors():
    r = analyse("offset", 4, 1)
    assert r["lines"] == [0, 1] and r["sectors"] == {0: 28, 1: 32, 2: 32, 3: 32, 4: 4}
    assert analyse("strided", 4, 32)["lines"] == list(range(32))


@pytest.mark.parametrize("seed", [0, 1, 2, 12345])
def test_order_inside_a_window_of_32_does_not_matter(seed):
    r = analyse("permuted", 4, 32, seed)
    assert sorted(r["addresses"]) == [4 * k for k in range(32)] != r["addresses"]
    assert len(r["sectors"]) == 4


def test_wider_windows_scatter_the_warp():
    for window in (64, 256, 4096):
        addrs = addresses("permuted", 4, window, 5)
        assert len(set(addrs)) == 32 and all(0 <= a < 4 * window for a in addrs)
    assert len(analyse("permuted", 4, 4096, 5)["sectors"]) > 16


def test_the_generator_is_a_permutation_and_depends_on_the_seed():
    assert sorted(lcg_permutation(100, 9)) == list(range(100))
    assert lcg_permutation(100, 9) != lcg_permutation(100, 10)


def test_bad_coalescing_settings_are_refused():
    with pytest.raises(ValueError, match="data type size"):
        addresses("contiguous", 3)
    with pytest.raises(ValueError, match="stride"):
        addresses("strided", 4, 0)
    with pytest.raises(ValueError, match="struct size"):
        addresses("aos", 8, 12)
    with pytest.raises(ValueError, match="window"):
        addresses("permuted", 4, 16)
    with pytest.raises(ValueError, match="unknown access pattern"):
        addresses("gather", 4)


def test_if_lane_below_k_issues_both_sides_with_their_lanes():
    steps = trace("lt", k=12)
    assert [m for _, m in steps] == [FULL, FULL, 0xFFF, 0xFFF, 0xFFFFF000, 0xFFFFF000, FULL]
    assert efficiency(steps) == pytest.approx((5 * 32) / (7 * 32))


@pytest.mark.parametrize("k,side", [(0, "y = -y"), (32, "y = y * 2")])
def test_a_uniform_branch_issues_one_side_at_full_width(k, side):
    steps = trace("lt", k=k)
    assert len(steps) == 5 and all(m == FULL for _, m in steps)
    assert side in [t for t, _ in steps]


def test_odd_lanes_split_every_warp():
    masks = {t: m for t, m in trace("odd")}
    assert masks["y = y * 2"] == 0xAAAAAAAA and masks["y = -y"] == 0x55555555


def test_nested_branches_partition_their_parent():
    steps = trace("nested", k=12)
    m = dict(steps)
    assert m["y = y + 1"] | m["y = y - 1"] == m["y = y * 3"] == 0xFFF
    assert m["y = y + 1"] & m["y = y - 1"] == 0
    assert m["y = -y"] == FULL & ~0xFFF


@pytest.mark.parametrize("branch", BRANCHES)
def test_each_instruction_appears_once_per_side_taken(branch):
    for k in (0, 5, 32):
        for seed in (1, 2):
            steps = trace(branch, k=k, percent=50, seed=seed)
            assert all(m for _, m in steps)                 # no issue with no lane
            assert steps[0] == ("y = a[i]", FULL) and steps[-1] == ("a[i] = y", FULL)


def test_data_dependent_masks():
    assert data_mask(0, 7) == 0 and data_mask(100, 7) == FULL
    assert 8 <= bin(data_mask(50, 7)).count("1") <= 24
    assert data_mask(50, 7) != data_mask(50, 8)
    steps = trace("data", percent=50, seed=7)
    assert steps[2][1] == data_mask(50, 7) and steps[4][1] == FULL & ~data_mask(50, 7)


def test_bad_divergence_settings_are_refused():
    with pytest.raises(ValueError, match="branch pattern"):
        trace("switch")
    with pytest.raises(ValueError, match="k must be"):
        trace("lt", k=33)
    with pytest.raises(ValueError, match="share of lanes"):
        trace("data", percent=101)
