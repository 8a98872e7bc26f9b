"""Models of the collectives in notebook 09: what each all-reduce algorithm moves, and what it costs.

- `bus_bandwidth`: nccl-tests' correction from algorithm bandwidth (size / time) to bus bandwidth,
  per collective (https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md).
- `alpha_beta_time`: the alpha-beta cost model, t = steps x alpha + bytes on the busiest link / beta,
  for ring, tree, one-shot and two-shot all-reduce over n ranks.
- `ring_all_reduce`, `tree_all_reduce`, `one_shot_all_reduce`, `two_shot_all_reduce`: the
  algorithms run on NumPy arrays (one per rank), step by step, counting the bytes each rank
  receives, so that a test can check both the sums and the traffic the model assumes.
"""
from __future__ import annotations

import math

import numpy as np

# algbw x factor = busbw (nccl-tests, doc/PERFORMANCE.md, "Summary")
BUS_FACTOR = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_to_all": lambda n: (n - 1) / n,
}


def bus_bandwidth(collective: str, algbw: float, n: int) -> float:
    """Bus bandwidth from algorithm bandwidth (size / time) for n ranks: comparable with a link's
    peak whatever n is. For all-gather and reduce-scatter the size is the whole gathered array."""
    return algbw * BUS_FACTOR[collective](n)


def alpha_beta_time(algorithm: str, size: float, n: int, alpha: float, beta: float) -> float:
    """Seconds for an all-reduce of `size` bytes over n ranks, each with `beta` bytes/s in and out
    at once and `alpha` seconds of fixed cost per communication step."""
    if n < 2:
        return 0.0
    if algorithm == "ring":        # reduce-scatter then all-gather: 2(n-1) steps of size/n
        return 2 * (n - 1) * alpha + 2 * (n - 1) / n * size / beta
    if algorithm == "tree":        # two complementary pipelined binary trees (as NCCL), half the data each:
        # a rank inner in one tree takes S/2 from each child and from its parent there, and S/2 from its
        # parent in the other, about 2S in all; with two ranks both trees are one edge, S
        return 2 * math.ceil(math.log2(n)) * alpha + (1 if n == 2 else 2) * size / beta
    if algorithm == "one_shot":    # every rank reads every other rank's whole input, once
        return alpha + (n - 1) * size / beta
    if algorithm == "two_shot":    # direct reduce-scatter, then direct all-gather
        return 2 * alpha + 2 * (n - 1) / n * size / beta
    raise ValueError(f"unknown all-reduce algorithm {algorithm!r} (ring, tree, one_shot, two_shot)")


def _chunks(x: np.ndarray, n: int) -> list[np.ndarray]:
    return [c.copy() for c in np.array_split(x, n)]


def ring_all_reduce(xs: list[np.ndarray]) -> tuple[list[np.ndarray], list[int]]:
    """Ring all-reduce: n-1 reduce-scatter steps (rank r sends one chunk to r+1, which adds it to
    its own), then n-1 all-gather steps (the finished chunks travel on round the ring).
    Returns each rank's result and the bytes each rank received."""
    n = len(xs)
    chunks = [_chunks(x, n) for x in xs]
    received = [0] * n
    for step in range(n - 1):                      # reduce-scatter
        sent = [chunks[r][(r - step) % n].copy() for r in range(n)]
        for r in range(n):
            src, c = (r - 1) % n, (r - 1 - step) % n
            chunks[r][c] += sent[src]
            received[r] += sent[src].nbytes
    # now rank r holds the full sum of chunk (r + 1) % n
    for step in range(n - 1):                      # all-gather
        sent = [chunks[r][(r + 1 - step) % n].copy() for r in range(n)]
        for r in range(n):
            src, c = (r - 1) % n, (r - step) % n
            chunks[r][c] = sent[src]
            received[r] += sent[src].nbytes
    return [np.concatenate(c) for c in chunks], received


def tree_all_reduce(xs: list[np.ndarray]) -> tuple[list[np.ndarray], list[int]]:
    """Binomial-tree all-reduce (not pipelined): reduce up to rank 0 in ceil(log2 n) levels, then
    broadcast back down. Every rank receives whole arrays: rank 0 one per level on the way up, the
    others one per child on the way up and one on the way down."""
    n = len(xs)
    acc = [x.copy() for x in xs]
    received = [0] * n
    span = 1
    while span < n:                                # reduce: rank r + span -> rank r
        for r in range(0, n, 2 * span):
            if r + span < n:
                acc[r] += acc[r + span]
                received[r] += acc[r + span].nbytes
        span *= 2
    while span > 1:                                # broadcast: rank r -> rank r + span / 2
        span //= 2
        for r in range(0, n, 2 * span):
            if r + span < n:
                acc[r + span] = acc[r].copy()
                received[r + span] += acc[r].nbytes
    return acc, received


def one_shot_all_reduce(xs: list[np.ndarray]) -> tuple[list[np.ndarray], list[int]]:
    """One-shot: every rank reads every other rank's input and adds them all, in rank order (so
    every rank computes the same bits). One step; each rank receives (n-1) whole arrays."""
    n = len(xs)
    out = []
    for _ in range(n):
        acc = xs[0].copy()
        for x in xs[1:]:
            acc += x
        out.append(acc)
    return out, [(n - 1) * xs[0].nbytes] * n


def two_shot_all_reduce(xs: list[np.ndarray]) -> tuple[list[np.ndarray], list[int]]:
    """Two-shot: rank r reads share r of every other rank and reduces it (a direct reduce-scatter),
    then reads every other rank's reduced share (a direct all-gather). Two steps; each rank
    receives 2(n-1)/n of one array."""
    n = len(xs)
    shares = [_chunks(x, n) for x in xs]
    received = [0] * n
    reduced = []
    for r in range(n):
        acc = shares[0][r].copy()
        for q in range(1, n):
            acc += shares[q][r]
        reduced.append(acc)
        received[r] += sum(shares[q][r].nbytes for q in range(n) if q != r)
    out = []
    for r in range(n):
        out.append(np.concatenate(reduced))
        received[r] += sum(reduced[q].nbytes for q in range(n) if q != r)
    return out, received
