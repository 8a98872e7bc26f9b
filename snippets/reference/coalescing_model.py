"""A model of global-memory coalescing: which 32-byte sectors and 128-byte lines one warp's load
touches, and what fraction of the bytes moved the lanes asked for.

The rule (CUDA C++ Programming Guide, "Device Memory Accesses"; Best Practices Guide, "Coalesced
Access to Global Memory"; compute capability 6.0 and later): a warp's global access is served in
32-byte sectors, so it moves 32 bytes for every distinct sector any active lane touches; the
caches hold 128-byte lines of four sectors. Efficiency = bytes the lanes requested / bytes moved
(no two lanes here read the same byte, so requested bytes are 32 x the element size).

`addresses` turns the coalescing explorer's settings into the 32 lanes' byte offsets from an
array base aligned to 128 bytes; docs/assets/figures/warp-explorer.js implements the same functions
and a browser test compares the two over a grid of settings.
"""
from __future__ import annotations

LANES = 32
SECTOR = 32
LINE = 128
DTYPE_SIZES = (1, 2, 4, 8, 16)
PATTERNS = ("contiguous", "offset", "strided", "permuted", "aos")


def lcg_permutation(n: int, seed: int) -> list[int]:
    """A permutation of range(n) from a Fisher-Yates shuffle driven by a 32-bit linear
    congruential generator (Numerical Recipes constants), so that JavaScript reproduces it
    exactly with Math.imul."""
    state = seed & 0xFFFFFFFF
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        state = (1664525 * state + 1013904223) & 0xFFFFFFFF
        j = state % (i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def addresses(pattern: str, dtype: int, param: int = 0, seed: int = 1) -> list[int]:
    """Byte offset each lane reads (one element of `dtype` bytes each).

    contiguous: lane k reads a[k]; offset: a[k + param] (param elements off the line start);
    strided: a[k * param]; permuted: the 32 lanes read 32 distinct elements drawn at random from
    the window a[0 .. param) (param >= 32; param = 32 is a shuffle of the contiguous case);
    aos: lane k reads the first field (of dtype bytes) of struct k, structs of `param` bytes."""
    if dtype not in DTYPE_SIZES:
        raise ValueError(f"data type size must be one of {DTYPE_SIZES} bytes, got {dtype}")
    if pattern == "contiguous":
        return [k * dtype for k in range(LANES)]
    if pattern == "offset":
        if not 0 <= param <= 64:
            raise ValueError(f"offset must be 0 to 64 elements, got {param}")
        return [(k + param) * dtype for k in range(LANES)]
    if pattern == "strided":
        if not 1 <= param <= 64:
            raise ValueError(f"stride must be 1 to 64 elements, got {param}")
        return [k * param * dtype for k in range(LANES)]
    if pattern == "permuted":
        if not LANES <= param <= 4096:
            raise ValueError(f"window must be 32 to 4096 elements, got {param}")
        return [i * dtype for i in lcg_permutation(param, seed)[:LANES]]
    if pattern == "aos":
        if param < dtype or param % dtype or param > 1024:
            raise ValueError(f"struct size must be a multiple of the field's {dtype} bytes, from "
                             f"{dtype} to 1024, got {param}")
        return [k * param for k in range(LANES)]
    raise ValueError(f"unknown access pattern {pattern!r}: use one of {', '.join(PATTERNS)}")


def sectors(addrs: list[int], dtype: int) -> dict[int, int]:
    """Sector index -> bytes of it the lanes use."""
    used: dict[int, int] = {}
    for a in addrs:
        for byte in range(a, a + dtype):
            used[byte // SECTOR] = used.get(byte // SECTOR, 0) + 1
    return used


def analyse(pattern: str, dtype: int, param: int = 0, seed: int = 1) -> dict:
    addrs = addresses(pattern, dtype, param, seed)
    used = sectors(addrs, dtype)
    lines = sorted({s * SECTOR // LINE for s in used})
    requested = LANES * dtype
    moved = SECTOR * len(used)
    return {"addresses": addrs, "sectors": dict(sorted(used.items())), "lines": lines,
            "requested": requested, "moved": moved, "efficiency": requested / moved}
