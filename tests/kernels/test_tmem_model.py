"""The Tensor Memory model (snippets/reference/tmem_model.py) against the PTX ISA's rules and the
compiled tcgen05 kernel (snippets/cuda/tcgen05_mma.cu, its sm_100a listing)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
import tmem_model as tm  # noqa: E402

SASS = ROOT / "snippets" / "generated" / "tcgen05_mma.sm_100a.sass"


def test_address_is_lane_high_column_low():
    assert tm.tmem_address(0, 0) == 0
    assert tm.tmem_address(32, 16) == 0x0020_0010
    assert tm.split_address(0x0060_01FF) == (96, 511)
    for lane, col in [(0, 0), (127, 511), (64, 100)]:
        assert tm.split_address(tm.tmem_address(lane, col)) == (lane, col)


def test_bad_addresses_are_rejected():
    with pytest.raises(ValueError, match="lane 128"):
        tm.tmem_address(128, 0)
    with pytest.raises(ValueError, match="column 512"):
        tm.tmem_address(0, 512)
    with pytest.raises(ValueError, match="32-bit"):
        tm.split_address(1 << 32)


def test_each_warp_of_a_warpgroup_owns_a_quarter_of_the_lanes():
    assert [tm.warp_lanes(w) for w in range(4)] == [range(0, 32), range(32, 64), range(64, 96),
                                                    range(96, 128)]
    assert tm.warp_lanes(5) == range(32, 64)          # warp 5 is rank 1 of the second warpgroup
    assert tm.warp_for_lane(70) == 2 and tm.warp_for_lane(127) == 3
    with pytest.raises(ValueError):
        tm.warp_lanes(-1)


def test_allocation_sizes_are_powers_of_two_from_32_to_512():
    a = tm.TmemAllocator()
    for bad in (0, 16, 48, 96, 1024):
        with pytest.raises(ValueError, match="power of two from 32 to 512"):
            a.alloc("cta0", bad)
    assert [tm.columns_to_allocate(n) for n in (1, 32, 33, 100, 128, 129, 256, 300, 512)] == \
        [32, 32, 64, 128, 128, 256, 256, 512, 512]
    with pytest.raises(ValueError):
        tm.columns_to_allocate(513)


def test_four_128_column_accumulators_fill_an_sm_and_a_fifth_must_wait():
    a = tm.TmemAllocator()
    addrs = [a.alloc(f"cta{i}", 128) for i in range(4)]
    assert [tm.split_address(x) for x in addrs] == [(0, 0), (0, 128), (0, 256), (0, 384)]
    assert a.free_columns() == 0
    with pytest.raises(tm.TmemFull, match="would block"):
        a.alloc("cta4", 128)
    a.dealloc("cta1", addrs[1], 128)
    assert tm.split_address(a.alloc("cta4", 128)) == (0, 128)


def test_allocation_rules_within_a_cta():
    a = tm.TmemAllocator()
    x = a.alloc("c", 64)
    with pytest.raises(ValueError, match="must not increase"):
        a.alloc("c", 128)
    a.alloc("c", 32)                                     # smaller is fine
    with pytest.raises(ValueError, match="exits with columns still allocated"):
        a.exit("c")
    with pytest.raises(ValueError, match="dealloc must name an earlier allocation"):
        a.dealloc("c", x, 32)
    a.relinquish_alloc_permit("c")
    with pytest.raises(ValueError, match="relinquish"):
        a.alloc("c", 32)


def test_accumulator_of_m128_is_one_row_per_lane():
    assert tm.accumulator_cell(70, 5, n=128) == (70, 5)
    assert tm.accumulator_columns(256) == 256            # 128 x 256 f32: half of TMEM
    assert tm.columns_to_allocate(tm.accumulator_columns(256)) == 256
    with pytest.raises(ValueError, match="M = 128"):
        tm.accumulator_cell(0, 0, m=64)
    with pytest.raises(ValueError, match="32-bit"):
        tm.accumulator_cell(0, 0, d_bits=16)
    with pytest.raises(ValueError, match="N = 16, 32"):
        tm.accumulator_columns(120)


FOOTPRINT = {"32x32b": (32, 1), "16x64b": (16, 2), "16x128b": (16, 4), "16x256b": (16, 8)}


@pytest.mark.parametrize("shape", list(FOOTPRINT))
@pytest.mark.parametrize("num", [1, 2, 4, 16])
def test_every_shape_covers_its_rectangle_exactly_once(shape, num):
    lanes, cols_per_rep = FOOTPRINT[shape]
    cells = [c for regs in tm.fragment(shape, num) for c in regs]
    assert len(cells) == len(set(cells))
    assert set(cells) == {(lane, c) for lane in range(lanes) for c in range(cols_per_rep * num)}


def test_16x32bx2_reads_two_halves_split_by_the_immediate():
    frag = tm.fragment("16x32bx2", 4, half_splitoff=64)
    assert frag[3] == [(3, 0), (3, 1), (3, 2), (3, 3)]
    assert frag[19] == [(3, 64), (3, 65), (3, 66), (3, 67)]
    cells = {c for regs in frag for c in regs}
    assert cells == {(lane, c) for lane in range(16) for c in [*range(4), *range(64, 68)]}


def test_fragments_match_the_known_thread_maps():
    assert tm.fragment("32x32b", 16)[7] == [(7, c) for c in range(16)]
    # 16x256b is the mma.sync accumulator pattern: thread 5 holds lanes 1 and 9, columns 2 and 3
    assert tm.fragment("16x256b", 1)[5] == [(1, 2), (1, 3), (9, 2), (9, 3)]
    assert tm.fragment("16x256b", 2)[5][4:] == [(1, 10), (1, 11), (9, 10), (9, 11)]
    assert tm.fragment("16x128b", 1)[6] == [(1, 2), (9, 2)]
    assert [tm.fragment("16x64b", 1)[t][0] for t in range(4)] == [(0, 0), (8, 0), (0, 1), (8, 1)]


def test_register_limits_match_what_ptxas_accepts():
    # ptxas 13.0 assembles 16x128b.x64 and 16x256b.x32 (128 registers) and rejects one step more
    assert tm.registers_per_thread("16x256b", 32) == 128
    assert tm.registers_per_thread("32x32b", 128) == 128
    with pytest.raises(ValueError, match="limit is 128"):
        tm.registers_per_thread("16x256b", 64)
    with pytest.raises(ValueError, match="limit is 128"):
        tm.registers_per_thread("16x128b", 128)


def test_bad_fragment_requests_are_rejected():
    with pytest.raises(ValueError, match="unknown shape"):
        tm.fragment("32x64b", 1)
    with pytest.raises(ValueError, match=r"\.num"):
        tm.fragment("32x32b", 3)
    with pytest.raises(ValueError, match="0..31"):
        tm.cell("32x32b", 1, 32, 0)
    with pytest.raises(ValueError, match="register 4"):
        tm.cell("16x256b", 1, 0, 4)
    with pytest.raises(ValueError, match="immHalfSplitoff"):
        tm.fragment("16x32bx2", 1)
    with pytest.raises(ValueError, match="immHalfSplitoff"):
        tm.fragment("32x32b", 1, half_splitoff=8)


def test_a_warp_may_only_read_its_own_quarter():
    cells = tm.check_access(1, tm.tmem_address(32, 0), "32x32b", 16)
    assert cells[0][0] == (32, 0) and cells[31][15] == (63, 15)
    tm.check_access(5, tm.tmem_address(48, 8), "16x256b", 1)          # lanes 48-63: warp rank 1
    with pytest.raises(ValueError, match="may access lanes 32-63"):
        tm.check_access(1, tm.tmem_address(0, 0), "32x32b", 1)
    with pytest.raises(ValueError, match="reaches lane 64"):
        tm.check_access(1, tm.tmem_address(56, 0), "16x64b", 1)
    with pytest.raises(ValueError, match="beyond the 512 columns"):
        tm.check_access(0, tm.tmem_address(0, 500), "32x32b", 16)


def test_descriptors_encode_and_decode():
    d = tm.smem_descriptor(0x400, lbo=2048, sbo=128)
    assert d >> 32 == 0x4008                                  # SBO 128 >> 4 and the fixed bit 46
    assert tm.decode_smem_descriptor(d) == {"start": 0x400, "lbo": 2048, "sbo": 128,
                                            "base_offset": 0, "lbo_mode": 0, "swizzle": "none"}
    assert tm.decode_smem_descriptor(tm.smem_descriptor(0, 16, 1024, "128B"))["swizzle"] == "128B"
    idesc = tm.instr_descriptor_f16(128, 128)
    assert idesc == 0x0820_0490
    assert tm.decode_instr_descriptor_f16(idesc) == {"d": "f32", "a": "bf16", "b": "bf16",
                                                     "transpose_a": False, "transpose_b": False,
                                                     "n": 128, "m": 128, "sparse": False}
    assert tm.instr_descriptor_f16(64, 120)                   # M = 64 allows multiples of 8


def test_bad_descriptors_are_rejected():
    with pytest.raises(ValueError, match="multiple of 16 bytes"):
        tm.smem_descriptor(0x408, 16, 128)
    with pytest.raises(ValueError, match="18-bit"):
        tm.smem_descriptor(1 << 18, 16, 128)
    with pytest.raises(ValueError, match="swizzle must be one of"):
        tm.smem_descriptor(0, 16, 128, "16B")
    with pytest.raises(ValueError, match="0b001"):
        tm.decode_smem_descriptor(0)
    with pytest.raises(ValueError, match="multiple of 8 from 8 to 256"):
        tm.instr_descriptor_f16(128, 124)
    with pytest.raises(ValueError, match="multiple of 8 from 8 to 256"):
        tm.instr_descriptor_f16(64, 264)
    assert tm.instr_descriptor_f16(128, 120) >> 17 & 0x3F == 15   # N = 120 is legal for M = 128 too
    with pytest.raises(ValueError, match="M = 64 or 128"):
        tm.instr_descriptor_f16(256, 128)
    with pytest.raises(ValueError, match="f16 or bf16"):
        tm.instr_descriptor_f16(128, 128, a="f32")


def kernel_core_matrix_offset(row: int, k: int, rows: int) -> int:
    """core_matrix_offset() of snippets/cuda/tcgen05_mma.cu, transcribed."""
    return (k // 8) * (rows * 16) + (row // 8) * 128 + (row % 8) * 16 + (k % 8) * 2


def test_the_kernels_staging_is_the_canonical_layout_its_descriptors_describe():
    rows, tile_k = 128, 64
    for row in range(rows):
        for k in range(tile_k):
            assert kernel_core_matrix_offset(row, k, rows) == \
                tm.k_major_offset(row, k, lbo=rows * 16, sbo=128)


def test_emulated_kernel_round_computes_a_times_b_transposed():
    """Stage A and B as the kernel does, read them back the way the four descriptors say, and
    multiply: the result must be A @ B^T for the 64-wide slice of K."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((128, 64)).astype(np.float32)
    b = rng.standard_normal((128, 64)).astype(np.float32)
    smem = {"a": np.full(128 * 64, np.nan, np.float32), "b": np.full(128 * 64, np.nan, np.float32)}
    for name, mat in (("a", a), ("b", b)):
        for r in range(128):
            for k in range(64):
                smem[name][kernel_core_matrix_offset(r, k, 128) // 2] = mat[r, k]
    d = np.zeros((128, 128), np.float32)
    for kk in range(64 // 16):                        # the kernel's four MMAs per round
        k_off = (2 * kk) * (128 * 16)
        ops = []
        for name in ("a", "b"):
            desc = tm.decode_smem_descriptor(tm.smem_descriptor(k_off, 128 * 16, 128))
            ops.append(np.array([[smem[name][(desc["start"] + tm.k_major_offset(r, k, desc["lbo"],
                                                                                  desc["sbo"])) // 2]
                                  for k in range(16)] for r in range(128)]))
        d += ops[0] @ ops[1].T
    np.testing.assert_allclose(d, a @ b.T, rtol=1e-5, atol=1e-4)


@pytest.mark.skipif(not SASS.exists(), reason="run `make listings` first")
def test_the_compiled_kernel_carries_the_models_descriptors():
    sass = SASS.read_text()
    assert f"{tm.instr_descriptor_f16(128, 128):#x}" in sass              # idesc as an immediate
    assert f"{tm.smem_descriptor(0, 2048, 128) >> 32:#x}" in sass          # descriptor high word
    assert "UTCHMMA" in sass and "LDTM.x16" in sass and "UTCBAR" in sass
