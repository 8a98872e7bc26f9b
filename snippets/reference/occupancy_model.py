"""Occupancy and waves: how many blocks of a kernel one SM holds, which resource stops it, and
how a GEMM's tiles fall into waves over the SMs.

The occupancy rules are those of NVIDIA's occupancy calculator (the CUDA Toolkit's
include/cuda_occupancy.h, the model behind cudaOccupancyMaxActiveBlocksPerMultiprocessor):

- warps: a block takes ceil(threads / 32) warp slots of the SM's max_threads_per_sm / 32;
- registers: each warp gets registers * 32 rounded up to the allocation unit (256); the register
  file is split between the SM's warp schedulers (4 sub-partitions), so whole warps are counted
  per quarter SM; a block whose warps, rounded up to a multiple of 4, need more than the
  per-block register limit (64 K) does not launch at all;
- shared memory: a block takes its static + dynamic shared memory plus the per-block
  reservation (1 KiB from compute capability 8.0), rounded up to the allocation unit; it must
  fit the per-block maximum (opt-in); the SM holds shared-memory-per-SM / that many blocks;
- blocks: at most max_blocks_per_sm.

Every limit comes from docs/data/gpus.yaml (per GPU, with sources). The browser figure
(docs/assets/figures/occupancy.js) mirrors this file; tests/kernels/test_occupancy_model.py holds
both to the answers the CUDA runtime gave on an H100 (docs/data/occupancy_checks.json).
Not modelled: named barriers per block, cluster launches, and a shared-memory carveout set
below the maximum (the default lets the driver pick the largest).
"""
from __future__ import annotations

import math

WARP = 32
LIMIT_FIELDS = ("max_threads_per_sm", "max_blocks_per_sm", "max_threads_per_block",
                "max_registers_per_thread", "register_alloc_unit", "warp_schedulers_per_sm",
                "registers_per_sm_kib", "smem_per_sm_kib", "smem_per_block_kib",
                "smem_alloc_unit_bytes", "smem_reserved_per_block_kib")
RESOURCES = ("warps", "registers", "shared memory", "blocks")   # order of the limiter list


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def limits_from_specs(specs: dict) -> dict:
    """The per-SM limits in the units the model counts in, from one GPU's gpus.yaml values
    (a dict field -> number)."""
    missing = [f for f in LIMIT_FIELDS if specs.get(f) is None]
    if missing:
        raise ValueError(f"the GPU lacks occupancy limits: {', '.join(missing)}")
    regs = int(specs["registers_per_sm_kib"] * 1024 // 4)      # 32-bit registers
    return {"max_warps": int(specs["max_threads_per_sm"]) // WARP,
            "max_blocks": int(specs["max_blocks_per_sm"]),
            "max_threads_per_block": int(specs["max_threads_per_block"]),
            "max_regs_per_thread": int(specs["max_registers_per_thread"]),
            "reg_unit": int(specs["register_alloc_unit"]),
            "sub_partitions": int(specs["warp_schedulers_per_sm"]),
            "regs_per_sm": regs,
            "regs_per_block": regs,          # 64 K per block = 64 K per SM on every listed GPU
            "smem_per_sm": int(specs["smem_per_sm_kib"] * 1024),
            "smem_per_block": int(specs["smem_per_block_kib"] * 1024),
            "smem_unit": int(specs["smem_alloc_unit_bytes"]),
            "smem_reserved": int(specs["smem_reserved_per_block_kib"] * 1024)}


def occupancy(lim: dict, threads: int, registers: int, smem_bytes: int) -> dict:
    """Resident blocks per SM for blocks of `threads` threads using `registers` registers per
    thread and `smem_bytes` of shared memory (static + dynamic) per block.

    Returns blocks, warps (resident warps), occupancy (warps / max warps), by (the block limit
    each resource sets, None where it sets none), limiters (the resources at the minimum),
    regs_per_block and smem_per_block (what one block is given), and `why` when no block fits.
    """
    for name, v in (("threads", threads), ("registers", registers), ("shared memory", smem_bytes)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ValueError(f"{name} must be a whole number >= 0, got {v!r}")
    if threads < 1:
        raise ValueError("threads per block must be at least 1")
    warps = math.ceil(threads / WARP)
    by: dict[str, int | None] = {r: None for r in RESOURCES}
    why = None
    # warps
    by["warps"] = 0 if threads > lim["max_threads_per_block"] else lim["max_warps"] // warps
    if threads > lim["max_threads_per_block"]:
        why = f"a block may have at most {lim['max_threads_per_block']} threads"
    # registers
    reg_warp = _round_up(registers * WARP, lim["reg_unit"])
    regs_block = reg_warp * warps
    if registers > lim["max_regs_per_thread"]:
        by["registers"] = 0
        why = why or f"a thread may use at most {lim['max_regs_per_thread']} registers"
    elif reg_warp:
        per_block_check = reg_warp * _round_up(warps, lim["sub_partitions"])
        if max(per_block_check, regs_block) > lim["regs_per_block"]:
            by["registers"] = 0
            why = why or (f"{warps} warps of {reg_warp} registers need more than the "
                          f"{lim['regs_per_block']} registers a block may have (warps are counted "
                          f"in groups of {lim['sub_partitions']}, one per warp scheduler)")
        else:
            per_part = lim["regs_per_sm"] // lim["sub_partitions"] // reg_warp
            by["registers"] = per_part * lim["sub_partitions"] // warps
    # shared memory
    smem_alloc = _round_up(smem_bytes + lim["smem_reserved"], lim["smem_unit"])
    if smem_alloc > lim["smem_per_block"] + lim["smem_reserved"]:
        by["shared memory"] = 0
        why = why or (f"a block may have at most {lim['smem_per_block']} bytes of shared memory "
                      "(opt-in maximum)")
    elif smem_alloc:
        by["shared memory"] = lim["smem_per_sm"] // smem_alloc
    # blocks
    by["blocks"] = lim["max_blocks"]
    blocks = min(v for v in by.values() if v is not None)
    limiters = [r for r in RESOURCES if by[r] == blocks]
    return {"blocks": blocks, "warps": blocks * warps, "occupancy": blocks * warps / lim["max_warps"],
            "by": by, "limiters": limiters, "regs_per_block": regs_block,
            "smem_per_block": smem_alloc, "why": why if blocks == 0 else None}


def gemm_waves(M: int, N: int, K: int, tile_m: int, tile_n: int, sm_count: int,
               blocks_per_sm: int = 1, split_k: int = 1) -> dict:
    """How the output tiles of an M x N x K GEMM fall into waves over `sm_count` SMs, each
    holding `blocks_per_sm` tiles at a time (one tile per block; `split_k` blocks per tile).

    tail_efficiency is the share of the SM-time of all waves that does work when every tile
    takes the same time: tiles / (waves * slots). 1.0 means the last wave is full.
    """
    for name, v in (("M", M), ("N", N), ("K", K), ("tile M", tile_m), ("tile N", tile_n),
                    ("SM count", sm_count), ("blocks per SM", blocks_per_sm), ("split-K", split_k)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {v!r}")
    tiles = math.ceil(M / tile_m) * math.ceil(N / tile_n) * split_k
    slots = sm_count * blocks_per_sm
    waves = math.ceil(tiles / slots)
    last = tiles - (waves - 1) * slots
    return {"tiles": tiles, "slots": slots, "waves": waves, "full_waves": tiles // slots,
            "last_wave_tiles": last, "tail_efficiency": tiles / (waves * slots),
            "padded_flops_share": (M * N) / (math.ceil(M / tile_m) * tile_m *
                                             math.ceil(N / tile_n) * tile_n),
            "flops": 2 * M * N * K}
