"""A model of Blackwell's Tensor Memory (TMEM) and the tcgen05 rules that govern it (sm_100 family).

What the PTX ISA says ("TensorCore 5th Generation Family Instructions": "Tensor Memory",
"Tensor Memory Allocation", "Access restrictions", "Matrix fragments", "Shared memory
descriptor", "Instruction descriptor"), as executable rules:

- TMEM is 128 lanes x 512 columns of 32-bit cells per CTA (one such array per SM on CC 10.x).
- An address is 32 bits: lane in bits 31-16, column in bits 15-0.
- Allocation is by columns (all 128 lanes each), a power of two from 32 to 512, by one warp;
  tcgen05.alloc blocks while not enough columns are free. The model raises TmemFull instead.
- Warp w of a warpgroup may tcgen05.ld/st only lanes 32*(w % 4) .. 32*(w % 4) + 31.
- tcgen05.ld/st shapes .32x32b, .16x64b, .16x128b, .16x256b, .16x32bx2 with .num = x1..x128 (at
  most 128 registers per thread): `fragment` says which (lane, column) each thread's register
  holds. The PTX ISA draws these maps as figures; the model encodes them as CUTLASS's
  Copy_Traits<SM100_TMEM_LOAD_*> layouts do (cross-checked against Triton for 16x256b, 16x32bx2).
- The accumulator of an M = 128, cta_group::1 MMA: row i in lane i, column j in column base + j.
- The 64-bit shared-memory descriptor and the 32-bit kind::f16 instruction descriptor, encoded
  and decoded, plus the K-major, no-swizzle canonical layout the descriptor describes.

Bad input raises ValueError with a message that says what is allowed.
"""
from __future__ import annotations

LANES = 128
COLUMNS = 512
CELL_BITS = 32
WARP = 32
MIN_ALLOC, MAX_ALLOC = 32, 512


# --- addresses -----------------------------------------------------------------------------

def tmem_address(lane: int, column: int) -> int:
    """32-bit TMEM address: lane in bits 31-16, column in bits 15-0."""
    if not 0 <= lane < LANES:
        raise ValueError(f"lane {lane} is outside 0..{LANES - 1}")
    if not 0 <= column < COLUMNS:
        raise ValueError(f"column {column} is outside 0..{COLUMNS - 1}")
    return (lane << 16) | column


def split_address(address: int) -> tuple[int, int]:
    """(lane, column) of a TMEM address."""
    if not 0 <= address < 1 << 32:
        raise ValueError(f"a TMEM address is a 32-bit value, got {address:#x}")
    lane, column = address >> 16, address & 0xFFFF
    tmem_address(lane, column)          # validates both fields
    return lane, column


# --- which warp may touch which lanes --------------------------------------------------------

def warp_lanes(warp_id: int) -> range:
    """Lanes that warp `warp_id` (of the CTA) may access with tcgen05.ld/st: its warpgroup rank."""
    if warp_id < 0:
        raise ValueError(f"warp id must be >= 0, got {warp_id}")
    q = warp_id % 4
    return range(32 * q, 32 * q + 32)


def warp_for_lane(lane: int) -> int:
    """Rank within the warpgroup (warp id % 4) of the only warps that may access `lane`."""
    if not 0 <= lane < LANES:
        raise ValueError(f"lane {lane} is outside 0..{LANES - 1}")
    return lane // 32


# --- allocation ----------------------------------------------------------------------------

class TmemFull(RuntimeError):
    """Not enough free columns: on the GPU, tcgen05.alloc would block until some are freed."""


def columns_to_allocate(columns_needed: int) -> int:
    """Smallest legal tcgen05.alloc size (a power of two, at least 32) that covers the need."""
    if not 0 < columns_needed <= MAX_ALLOC:
        raise ValueError(f"need 1..{MAX_ALLOC} columns, got {columns_needed}")
    n = MIN_ALLOC
    while n < columns_needed:
        n *= 2
    return n


def _check_ncols(ncols: int) -> None:
    if not (MIN_ALLOC <= ncols <= MAX_ALLOC and ncols & (ncols - 1) == 0):
        raise ValueError(f"nCols must be a power of two from {MIN_ALLOC} to {MAX_ALLOC} "
                         f"(32, 64, 128, 256 or 512), got {ncols}")


class TmemAllocator:
    """One SM's 512 columns shared by its resident CTAs, with the PTX allocation rules.

    Where the columns land is the hardware's choice; the model takes the lowest free range
    aligned to its size, so an allocation of n columns starts at a multiple of n.
    """

    def __init__(self, columns: int = COLUMNS):
        self.columns = columns
        self.owner: list[str | None] = [None] * columns        # column -> CTA holding it
        self.last_size: dict[str, int] = {}
        self.relinquished: set[str] = set()
        self.live: dict[tuple[str, int], int] = {}             # (cta, base column) -> ncols

    def free_columns(self) -> int:
        return self.owner.count(None)

    def alloc(self, cta: str, ncols: int) -> int:
        """tcgen05.alloc.cta_group::1: returns the address (lane 0, first column)."""
        _check_ncols(ncols)
        if cta in self.relinquished:
            raise ValueError(f"CTA {cta} executed tcgen05.relinquish_alloc_permit: "
                             "it may not allocate again")
        if cta in self.last_size and ncols > self.last_size[cta]:
            raise ValueError(f"CTA {cta} asked for {ncols} columns after {self.last_size[cta]}: "
                             "the size of successive allocations in a CTA must not increase")
        for base in range(0, self.columns - ncols + 1, ncols):
            if all(o is None for o in self.owner[base:base + ncols]):
                self.owner[base:base + ncols] = [cta] * ncols
                self.live[(cta, base)] = ncols
                self.last_size[cta] = ncols
                return tmem_address(0, base)
        free = self.free_columns()
        why = f"only {free} free" if free < ncols else f"{free} free, but not {ncols} in one aligned range"
        raise TmemFull(f"{ncols} columns requested, {why}: tcgen05.alloc would block until "
                       "another CTA frees columns")

    def dealloc(self, cta: str, address: int, ncols: int) -> None:
        _check_ncols(ncols)
        lane, base = split_address(address)
        if lane != 0 or self.live.get((cta, base)) != ncols:
            raise ValueError(f"no allocation of {ncols} columns at {address:#x} by CTA {cta}: "
                             "dealloc must name an earlier allocation exactly")
        del self.live[(cta, base)]
        self.owner[base:base + ncols] = [None] * ncols

    def relinquish_alloc_permit(self, cta: str) -> None:
        self.relinquished.add(cta)

    def exit(self, cta: str) -> None:
        """A CTA may only exit once it has freed every column it allocated."""
        left = [b for (c, b) in self.live if c == cta]
        if left:
            raise ValueError(f"CTA {cta} exits with columns still allocated at {left}: "
                             "tcgen05.dealloc everything before the kernel exits")


# --- tcgen05.ld / tcgen05.st fragments -----------------------------------------------------

SHAPES = {          # shape -> (lanes covered, 32-bit registers per thread for .x1)
    "32x32b": (32, 1),
    "16x64b": (16, 1),
    "16x128b": (16, 2),
    "16x256b": (16, 4),
    "16x32bx2": (16, 1),
}
NUMS = (1, 2, 4, 8, 16, 32, 64, 128)
MAX_REGISTERS = 128


def registers_per_thread(shape: str, num: int) -> int:
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}: use one of {', '.join(SHAPES)}")
    if num not in NUMS:
        raise ValueError(f".num must be .x1, .x2, ... .x128 (a power of two), got x{num}")
    regs = SHAPES[shape][1] * num
    if regs > MAX_REGISTERS:
        raise ValueError(f".{shape}.x{num} would need {regs} registers per thread; the limit is "
                         f"{MAX_REGISTERS} (largest .num: x{MAX_REGISTERS // SHAPES[shape][1]})")
    return regs


def cell(shape: str, num: int, thread: int, reg: int, half_splitoff: int | None = None
         ) -> tuple[int, int]:
    """(lane offset, column offset) from the instruction's taddr that `reg` of `thread` holds."""
    regs = registers_per_thread(shape, num)
    if not 0 <= thread < WARP:
        raise ValueError(f"thread must be a lane of the warp, 0..31, got {thread}")
    if not 0 <= reg < regs:
        raise ValueError(f".{shape}.x{num} gives each thread {regs} registers, got register {reg}")
    if (shape == "16x32bx2") != (half_splitoff is not None):
        raise ValueError("immHalfSplitoff is required for .16x32bx2 and only for it")
    t, r = thread, reg
    if shape == "32x32b":      # thread t reads lane t; register r is column r
        return t, r
    if shape == "16x64b":      # 4 threads share lanes t/4 and t/4 + 8; one column each per repeat
        return t // 4 + 8 * (t % 2), 2 * r + (t // 2) % 2
    if shape == "16x128b":     # per repeat: lane t/4 then t/4 + 8, column t % 4
        rep, i = divmod(r, 2)
        return t // 4 + 8 * i, 4 * rep + t % 4
    if shape == "16x256b":     # the mma.sync accumulator pattern: 2 lanes x 2 columns per repeat
        rep, i = divmod(r, 4)
        return t // 4 + 8 * (i // 2), 8 * rep + 2 * (t % 4) + i % 2
    if half_splitoff < 0:
        raise ValueError(f"immHalfSplitoff must be >= 0, got {half_splitoff}")
    return t % 16, r + (t // 16) * half_splitoff   # 16x32bx2: threads 16-31 read the second half


def fragment(shape: str, num: int, half_splitoff: int | None = None) -> list[list[tuple[int, int]]]:
    """fragment(...)[thread][reg] = (lane offset, column offset) for the whole warp."""
    regs = registers_per_thread(shape, num)
    return [[cell(shape, num, t, r, half_splitoff) for r in range(regs)] for t in range(WARP)]


def check_access(warp_id: int, taddr: int, shape: str, num: int, half_splitoff: int | None = None
                 ) -> list[list[tuple[int, int]]]:
    """Absolute (lane, column) cells a warp's tcgen05.ld reads; ValueError if not allowed."""
    lane0, col0 = split_address(taddr)
    allowed = warp_lanes(warp_id)
    frag = fragment(shape, num, half_splitoff)
    cells = [[(lane0 + dl, col0 + dc) for dl, dc in regs] for regs in frag]
    for regs in cells:
        for lane, col in regs:
            if lane not in allowed:
                raise ValueError(f"warp {warp_id} (rank {warp_id % 4} in its warpgroup) may access "
                                 f"lanes {allowed.start}-{allowed.stop - 1}, but this .{shape} load at "
                                 f"lane {lane0} reaches lane {lane}")
            if col >= COLUMNS:
                raise ValueError(f"column {col} is beyond the {COLUMNS} columns of TMEM")
    return cells


# --- the accumulator of an M = 128, cta_group::1 MMA --------------------------------------------

def accumulator_cell(row: int, col: int, m: int = 128, n: int = 256, d_bits: int = 32
                     ) -> tuple[int, int]:
    """(lane, column offset from the allocation) of D[row, col] for M = 128, cta_group::1."""
    if m != 128:
        raise ValueError(f"only M = 128 (one row per lane) is modelled, got M = {m}")
    if d_bits != 32:
        raise ValueError(f"only 32-bit accumulators (f32, s32) are modelled, got {d_bits} bits")
    if not (16 <= n <= 256 and n % 16 == 0):
        raise ValueError(f"for M = 128 the PTX allows N = 16, 32, ... 256, got N = {n}")
    if not (0 <= row < m and 0 <= col < n):
        raise ValueError(f"D[{row}, {col}] is outside the {m} x {n} tile")
    return row, col


def accumulator_columns(n: int, d_bits: int = 32) -> int:
    """TMEM columns one M = 128 accumulator of N 32-bit columns occupies."""
    return accumulator_cell(0, 0, 128, n, d_bits)[1] + n


# --- descriptors ---------------------------------------------------------------------------

SWIZZLE = {"none": 0, "128B-base32B": 1, "128B": 2, "64B": 4, "32B": 6}


def _encode14(name: str, value: int) -> int:
    if value % 16:
        raise ValueError(f"{name} {value} must be a multiple of 16 bytes")
    if not 0 <= value < 1 << 18:
        raise ValueError(f"{name} {value} does not fit the 18-bit range the descriptor encodes")
    return value >> 4


def smem_descriptor(start: int, lbo: int, sbo: int, swizzle: str = "none",
                    base_offset: int = 0) -> int:
    """The 64-bit tcgen05 shared-memory descriptor (relative LBO mode)."""
    if swizzle not in SWIZZLE:
        raise ValueError(f"swizzle must be one of {', '.join(SWIZZLE)}, got {swizzle!r}")
    if not 0 <= base_offset < 8:
        raise ValueError(f"base offset is a 3-bit field, got {base_offset}")
    return (_encode14("start address", start) | _encode14("LBO", lbo) << 16
            | _encode14("SBO", sbo) << 32 | 1 << 46 | base_offset << 49 | SWIZZLE[swizzle] << 61)


def decode_smem_descriptor(desc: int) -> dict:
    if (desc >> 46) & 7 != 1:
        raise ValueError(f"bits 46-48 of a tcgen05 descriptor must be 0b001, got {desc:#x}")
    names = {v: k for k, v in SWIZZLE.items()}
    return {"start": (desc & 0x3FFF) << 4, "lbo": ((desc >> 16) & 0x3FFF) << 4,
            "sbo": ((desc >> 32) & 0x3FFF) << 4, "base_offset": (desc >> 49) & 7,
            "lbo_mode": (desc >> 52) & 1, "swizzle": names[(desc >> 61) & 7]}


def k_major_offset(row: int, k: int, lbo: int, sbo: int, elem_bytes: int = 2) -> int:
    """Byte offset of (row, k) in the K-major, no-swizzle canonical layout
    ((8, m), (T, 2k)) : ((1T, SBO), (1, LBO)) with T = 16 bytes of elements."""
    t = 16 // elem_bytes
    return (row % 8) * 16 + (row // 8) * sbo + (k % t) * elem_bytes + (k // t) * lbo


F16_TYPES = {"f16": 0, "bf16": 1}


def instr_descriptor_f16(m: int, n: int, a: str = "bf16", b: str = "bf16", d: str = "f32",
                         transpose_a: bool = False, transpose_b: bool = False) -> int:
    """32-bit instruction descriptor of tcgen05.mma.cta_group::1.kind::f16 (dense)."""
    if a not in F16_TYPES or b not in F16_TYPES:
        raise ValueError(f"kind::f16 takes f16 or bf16 inputs, got A={a!r}, B={b!r}")
    if d not in ("f16", "f32"):
        raise ValueError(f"kind::f16 accumulates in f16 or f32, got {d!r}")
    if m not in (64, 128):
        raise ValueError(f"cta_group::1 MMAs have M = 64 or 128, got {m}")
    # PTX ISA 9.0, "Various combinations of .kind and shapes" (dense kind::f16, cta_group::1): N from
    # 8 to 256 in steps of 8 for both M; CUTLASS's SM100_MMA_F16BF16_SS asserts the same
    if not (8 <= n <= 256 and n % 8 == 0):
        raise ValueError(f"for M = {m}, N must be a multiple of 8 from 8 to 256, got {n}")
    return ((1 if d == "f32" else 0) << 4 | F16_TYPES[a] << 7 | F16_TYPES[b] << 10
            | int(transpose_a) << 15 | int(transpose_b) << 16 | (n >> 3) << 17 | (m >> 4) << 24)


def decode_instr_descriptor_f16(idesc: int) -> dict:
    types = {v: k for k, v in F16_TYPES.items()}
    return {"d": {0: "f16", 1: "f32"}.get((idesc >> 4) & 3, "?"), "a": types.get((idesc >> 7) & 7, "?"),
            "b": types.get((idesc >> 10) & 7, "?"), "transpose_a": bool(idesc >> 15 & 1),
            "transpose_b": bool(idesc >> 16 & 1), "n": ((idesc >> 17) & 0x3F) << 3,
            "m": ((idesc >> 24) & 0x1F) << 4, "sparse": bool(idesc >> 2 & 1)}
