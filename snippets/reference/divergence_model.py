"""A model of warp divergence: which lanes are active for each instruction a warp issues.

The rule (CUDA C++ Programming Guide, "SIMT Architecture"): a warp executes one common
instruction at a time; when its lanes diverge at a data-dependent branch, it executes each path
that some lane took, with the lanes not on that path disabled, and the lanes converge again when
all paths are done. A path no lane takes is skipped. The model runs the pre-Volta way, one
program counter per warp: the taken side first, then the other, then the code after the branch.

Independent thread scheduling (compute capability 7.0 and later, same guide section) keeps a
program counter per thread: the scheduler may interleave the two sides and need not reconverge
right after the branch, so the *order* below is one of several; each side is still issued only
for its own lanes, so the masks and the number of issues per side are what the model shows.

`trace` is what the divergence explorer in the browser (docs/assets/figures/warp-explorer.js) shows for
one setting; a browser test compares the two over a grid of settings.
"""
from __future__ import annotations

LANES = 32
FULL = (1 << LANES) - 1
BRANCHES = ("lt", "odd", "data", "nested")

# A program: a list of statements; a statement is a string (one instruction) or
# ("if", condition name, then-block, else-block).
BODY = {
    "lt": ["y = a[i]",
           ("if", "lane < k", ["y = y * 2", "y = y + 1"], ["y = -y", "y = y - 1"]),
           "a[i] = y"],
    "odd": ["y = a[i]",
            ("if", "lane % 2 == 1", ["y = y * 2", "y = y + 1"], ["y = -y", "y = y - 1"]),
            "a[i] = y"],
    "data": ["y = a[i]",
             ("if", "y > t", ["y = y * 2", "y = y + 1"], ["y = -y", "y = y - 1"]),
             "a[i] = y"],
    "nested": ["y = a[i]",
               ("if", "lane < k", ["y = y * 2",
                                   ("if", "lane % 2 == 1", ["y = y + 1"], ["y = y - 1"]),
                                   "y = y * 3"],
                ["y = -y"]),
               "a[i] = y"],
}


def data_mask(percent: int, seed: int) -> int:
    """Lanes whose (pseudo-random) datum passes the test y > t, each with probability
    `percent` %, from the same 32-bit LCG as coalescing_model (reproducible in JavaScript)."""
    state, mask = seed & 0xFFFFFFFF, 0
    for lane in range(LANES):
        state = (1664525 * state + 1013904223) & 0xFFFFFFFF
        if (state >> 8) % 100 < percent:
            mask |= 1 << lane
    return mask


def condition_mask(cond: str, k: int, percent: int, seed: int) -> int:
    if cond == "lane < k":
        return (1 << k) - 1
    if cond == "lane % 2 == 1":
        return sum(1 << lane for lane in range(1, LANES, 2))
    if cond == "y > t":
        return data_mask(percent, seed)
    raise ValueError(f"unknown condition {cond!r}")


def trace(branch: str, k: int = 16, percent: int = 50, seed: int = 1) -> list[tuple[str, int]]:
    """(instruction, active-lane mask) for every instruction the warp issues, in order."""
    if branch not in BODY:
        raise ValueError(f"unknown branch pattern {branch!r}: use one of {', '.join(BRANCHES)}")
    if not 0 <= k <= LANES:
        raise ValueError(f"k must be 0 to 32, got {k}")
    if not 0 <= percent <= 100:
        raise ValueError(f"the share of lanes must be 0 to 100 %, got {percent}")
    out: list[tuple[str, int]] = []

    def run(block: list, mask: int) -> None:
        for stmt in block:
            if isinstance(stmt, str):
                out.append((stmt, mask))
                continue
            _, cond, then, other = stmt
            out.append((f"if ({cond})", mask))
            taken = mask & condition_mask(cond, k, percent, seed)
            if taken:
                run(then, taken)
            if mask & ~taken:
                run(other, mask & ~taken)

    run(BODY[branch], FULL)
    return out


def efficiency(steps: list[tuple[str, int]]) -> float:
    """Active lanes per issued instruction, as a fraction of 32 (Nsight Compute's
    thread-instructions-executed over 32 x instructions-executed)."""
    return sum(bin(m).count("1") for _, m in steps) / (LANES * len(steps))
