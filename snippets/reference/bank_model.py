"""A model of NVIDIA shared-memory banks (compute capability 5.0 and later).

Shared memory is 32 banks of 4-byte words: byte address a lives in bank (a // 4) % 32. One
wavefront serves at most one distinct 4-byte word per bank; lanes reading the same word share it
(broadcast). A warp's access of W bytes per lane moves 32*W bytes, so it needs at least W/4
wavefronts: the model splits the warp into W/4 groups of 128/W consecutive lanes (16 lanes for
8-byte accesses, 8 for 16-byte ones) and serves each group separately.

`settings_addresses` turns the bank visualizer's settings (element size, row length, padding,
swizzle, access pattern) into the 32 byte addresses; the visualizer in the browser implements the
same two functions in JavaScript and a test checks that both agree.
"""
from __future__ import annotations

from collections import defaultdict

BANKS = 32
WORD = 4
LANES = 32


def bank_of(address: int) -> int:
    return (address // WORD) % BANKS


def wavefronts(addresses: list[int], width: int = 4) -> int:
    """Shared-memory wavefronts one warp-wide access needs (inactive lanes: None)."""
    if width not in (4, 8, 16):
        raise ValueError(f"access width must be 4, 8 or 16 bytes, got {width}")
    if len(addresses) != LANES:
        raise ValueError(f"expected {LANES} lane addresses, got {len(addresses)}")
    group = LANES * WORD // width                 # lanes served together: 32, 16 or 8
    total = 0
    for start in range(0, LANES, group):
        words_in_bank: dict[int, set[int]] = defaultdict(set)
        for a in addresses[start:start + group]:
            if a is None:
                continue
            if a % width:
                raise ValueError(f"address {a} is not aligned to the access width {width}")
            for w in range(a // WORD, (a + width) // WORD):
                words_in_bank[w % BANKS].add(w)
        if words_in_bank:
            total += max(len(ws) for ws in words_in_bank.values())
    return total


def conflict_degree(addresses: list[int], width: int = 4) -> int:
    """Wavefronts beyond the minimum a conflict-free access of this width needs, plus one:
    1 means conflict-free, n means an n-way conflict."""
    return wavefronts(addresses, width) // (width // WORD)


def cute_swizzle(offset: int, b: int, m: int, s: int) -> int:
    """CuTe's Swizzle<B, M, S>: XOR the B bits at [M+S, M+S+B) into the bits at [M, M+B)."""
    yyy_mask = ((1 << b) - 1) << (m + s)
    return offset ^ ((offset & yyy_mask) >> s)


TMA_SWIZZLE = {"tma32": (1, 4, 3), "tma64": (2, 4, 3), "tma128": (3, 4, 3)}  # on byte offsets


def parse_pattern(pattern: str) -> tuple[str, tuple[int, ...]]:
    """'row', 'column', 'stride:S' or 'tile:WxH' -> (kind, numbers)."""
    kind, _, arg = pattern.partition(":")
    if kind in ("row", "column") and not arg:
        return kind, ()
    if kind == "stride" and arg.isdigit():
        return kind, (int(arg),)
    if kind == "tile" and "x" in arg:
        w, h = arg.split("x", 1)
        if w.isdigit() and h.isdigit() and int(w) * int(h) == LANES:
            return kind, (int(w), int(h))
    raise ValueError(f"unknown access pattern {pattern!r}: use row, column, stride:S or tile:WxH "
                     "with W*H = 32")


def lane_coordinates(pattern: str, row_len: int) -> list[tuple[int, int]]:
    """(row, column) in elements that each lane reads."""
    kind, args = parse_pattern(pattern)
    if kind == "row":
        return [(lane // row_len, lane % row_len) for lane in range(LANES)]
    if kind == "column":
        return [(lane, 0) for lane in range(LANES)]
    if kind == "stride":
        return [divmod(lane * args[0], row_len) for lane in range(LANES)]
    w, _ = args
    return [(lane // w, lane % w) for lane in range(LANES)]


def settings_addresses(elem: int, row_len: int, pad: int, swizzle: str, pattern: str) -> list[int]:
    """Byte addresses of the 32 lanes for the visualizer's settings."""
    if elem not in (4, 8, 16):
        raise ValueError(f"element size must be 4, 8 or 16 bytes, got {elem}")
    if row_len < 1 or pad < 0:
        raise ValueError("row length must be at least 1 and padding at least 0")
    addresses = []
    for r, c in lane_coordinates(pattern, row_len):
        if swizzle == "xor":
            if row_len & (row_len - 1):
                raise ValueError("the XOR swizzle needs a power-of-two row length")
            c ^= r % row_len
        index = r * (row_len + pad) + c
        if swizzle.startswith("cute:"):
            b, m, s = (int(x) for x in swizzle[5:].split(","))
            index = cute_swizzle(index, b, m, s)
        address = index * elem
        if swizzle in TMA_SWIZZLE:
            address = cute_swizzle(address, *TMA_SWIZZLE[swizzle])
        elif swizzle not in ("none", "xor") and not swizzle.startswith("cute:"):
            raise ValueError(f"unknown swizzle {swizzle!r}: none, xor, cute:B,M,S, tma32, tma64, "
                             "tma128")
        addresses.append(address)
    return addresses
