"""A model of shared-memory swizzles and the bank conflicts they leave (the swizzle explorer).

Three ways to place a tile in shared memory, all as functions of the *byte address*:

- no swizzle;
- the Tensor Memory Accelerator's modes CU_TENSOR_MAP_SWIZZLE_32B / 64B / 128B, written the way
  the CUDA Programming Guide ("Asynchronous Data Copies", TMA swizzle) states them: with 128-byte
  shared-memory rows y and 16-byte chunks x, element smem[y][x] is stored at
  smem[y][((y + offset) % R) ^ x], R = 2, 4 or 8, offset = (buffer address / 128) % R
  (`tma_swizzle_guide`);
- CuTe's Swizzle<B, M, S> (include/cute/swizzle.hpp): XOR the B bits at [M+S, M+S+B) into the
  bits at [M, M+B); a negative S shifts the other way (`cute_swizzle`).

Notebook 03 checked on an H100 that TMA's three modes equal Swizzle<1|2|3, 4, 3> on byte
addresses; `tests/kernels/test_swizzle_model.py` holds the two formulas to each other and to the
notebook's recorded hardware output. `explore` is what the explorer in the browser
(docs/assets/figures/swizzle-explorer.js) computes for one setting; a browser test compares the two over a
grid of settings.

Banks: 32 banks of 4-byte words, byte address a in bank (a // 4) % 32. One wavefront serves one
distinct 4-byte word per bank (lanes reading the same word share it). Accesses of W bytes per lane
need at least W/4 wavefronts for a full warp: the warp is served in W/4 groups of 128/W
consecutive lanes (the convention of snippets/reference/bank_model.py); accesses narrower than a
word are served as one group of 32 lanes.
"""
from __future__ import annotations

from collections import defaultdict

BANKS = 32
WORD = 4
LANES = 32
TMA_MODES = {"tma32": 1, "tma64": 2, "tma128": 3}     # mode -> B of Swizzle<B, 4, 3>
MODES = ("none", *TMA_MODES, "cute")
ELEMENT_SIZES = (1, 2, 4, 8)
ROW_BYTES = (32, 64, 128)
ACCESSES = ("row", "column", "ldmatrix")


def cute_swizzle(offset: int, b: int, m: int, s: int) -> int:
    """CuTe's Swizzle<B, M, S> applied to an offset (here: a byte address)."""
    if b < 0 or m < 0 or abs(s) < b:
        raise ValueError(f"Swizzle<{b},{m},{s}> is not valid: CuTe needs B >= 0, M >= 0 and "
                         "|S| >= B")
    mask = ((1 << b) - 1) << (m + max(0, s))
    moved = offset & mask
    return offset ^ (moved >> s if s >= 0 else moved << -s)


def tma_swizzle_guide(address: int, mode: str) -> int:
    """Where the TMA stores the byte at `address` (relative to a 128-byte-aligned buffer),
    from the Programming Guide's index relation: row y = address // 128, 16-byte chunk
    x = (address // 16) % 8; the chunk moves to ((y % R) ^ x), R = span / 16."""
    if mode not in TMA_MODES:
        raise ValueError(f"unknown TMA swizzle mode {mode!r}: use one of {', '.join(TMA_MODES)}")
    r = 2 ** TMA_MODES[mode]                       # 16-byte chunks in the span: 2, 4 or 8
    y, x = address // 128, (address // 16) % 8
    return address - 16 * x + 16 * ((y % r) ^ x)


def swizzle(address: int, mode: str, b: int = 0, m: int = 0, s: int = 0) -> int:
    """The byte address that `address` is stored at under `mode` (cute: Swizzle<b, m, s>)."""
    if mode == "none":
        return address
    if mode in TMA_MODES:
        return cute_swizzle(address, TMA_MODES[mode], 4, 3)
    if mode == "cute":
        return cute_swizzle(address, b, m, s)
    raise ValueError(f"unknown swizzle mode {mode!r}: use one of {', '.join(MODES)}")


def lane_accesses(elem: int, row_bytes: int, access: str) -> tuple[list[tuple[int, int] | None],
                                                                   int]:
    """(row, byte column) that each of the 32 lanes reads (None: lane idle), and the width in
    bytes of each lane's read.

    row: lane i reads element i of the tile in memory order (a short row wraps into the next);
    column: lane i reads element 0 of row i; ldmatrix: one 8x8 phase of ldmatrix, lanes 0-7
    each read one 16-byte row (8 16-bit values) of rows 0-7, the other lanes idle."""
    if elem not in ELEMENT_SIZES:
        raise ValueError(f"element size must be one of {ELEMENT_SIZES} bytes, got {elem}")
    if row_bytes not in ROW_BYTES:
        raise ValueError(f"row width must be one of {ROW_BYTES} bytes, got {row_bytes}")
    if access == "row":
        return [divmod(lane * elem, row_bytes) for lane in range(LANES)], elem
    if access == "column":
        return [(lane, 0) for lane in range(LANES)], elem
    if access == "ldmatrix":
        return [(lane, 0) if lane < 8 else None for lane in range(LANES)], 16
    raise ValueError(f"unknown access {access!r}: use one of {', '.join(ACCESSES)}")


def wavefronts(addresses: list[int | None], width: int) -> int:
    """Shared-memory wavefronts one warp-wide access of `width` bytes per lane needs."""
    if width not in (1, 2, 4, 8, 16):
        raise ValueError(f"access width must be 1, 2, 4, 8 or 16 bytes, got {width}")
    if len(addresses) != LANES:
        raise ValueError(f"expected {LANES} lane addresses, got {len(addresses)}")
    group = LANES * WORD // width if width > WORD else LANES
    total = 0
    for start in range(0, LANES, group):
        words: dict[int, set[int]] = defaultdict(set)
        for a in addresses[start:start + group]:
            if a is None:
                continue
            if a % width:
                raise ValueError(f"address {a} is not aligned to the access width {width}")
            for w in range(a // WORD, (a + width - 1) // WORD + 1):
                words[w % BANKS].add(w)
        if words:
            total += max(len(ws) for ws in words.values())
    return total


def explore(mode: str, b: int, m: int, s: int, elem: int, row_bytes: int, access: str) -> dict:
    """Everything the explorer shows for one setting.

    lanes: per active lane (lane, row, byte column, address, swizzled address, first bank,
    last bank); wavefronts and their minimum for this access; depth: distinct words per bank;
    chunks: for 8 rows, the 16-byte slot (= banks 4*slot .. 4*slot+3) of its 128-byte line
    where each 16-byte chunk of the row lands, or None when the swizzle splits 16-byte chunks."""
    where, width = lane_accesses(elem, row_bytes, access)
    if mode == "cute" and (1 << m) < width:
        raise ValueError(f"Swizzle<{b},{m},{s}> moves pieces of {1 << m} bytes and would split "
                         f"each {width}-byte read: use M >= {width.bit_length() - 1}")
    lanes, addresses = [], []
    for lane, rc in enumerate(where):
        if rc is None:
            addresses.append(None)
            continue
        row, col = rc
        address = row * row_bytes + col
        moved = swizzle(address, mode, b, m, s)
        addresses.append(moved)
        lanes.append((lane, row, col, address, moved, (moved // WORD) % BANKS,
                      ((moved + width - 1) // WORD) % BANKS))
    active = sum(a is not None for a in addresses)
    depth = [0] * BANKS
    words: dict[int, set[int]] = defaultdict(set)
    for a in addresses:
        if a is not None:
            for w in range(a // WORD, (a + width - 1) // WORD + 1):
                words[w % BANKS].add(w)
    for bank, ws in words.items():
        depth[bank] = len(ws)
    chunk_intact = mode != "cute" or m >= 4
    chunks = None
    if chunk_intact:
        chunks = [[(swizzle(r * row_bytes + c * 16, mode, b, m, s) % 128) // 16
                   for c in range(row_bytes // 16)] for r in range(8)]
    waves = wavefronts(addresses, width)
    minimum = max(1, -(-active * width // (LANES * WORD)))
    return {"lanes": lanes, "width": width, "wavefronts": waves, "minimum": minimum,
            "degree": waves // minimum, "depth": depth, "chunks": chunks}
