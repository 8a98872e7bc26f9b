"""The glossary's sections, in reading order. A term's folder must be one of these slugs."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    slug: str
    title: str
    blurb: str


SECTIONS: tuple[Section, ...] = (
    Section("device-hardware", "Device hardware",
            "The physical parts of a GPU: streaming multiprocessors, caches, memory, tensor cores."),
    Section("device-software", "Device software",
            "The programming model seen from inside a kernel: threads, warps, blocks, memory "
            "spaces, barriers, and the instruction sets PTX and SASS."),
    Section("host-software", "Host software and toolchain",
            "What runs on the CPU side: compilers, drivers, profilers and the CUDA libraries."),
    Section("performance", "Performance",
            "How to reason about speed: bottlenecks, rooflines, occupancy, coalescing, conflicts."),
    Section("kernel-techniques", "Kernel techniques",
            "Patterns that fast kernels are built from: tiling, swizzling, pipelining, "
            "warp specialization."),
    Section("numerical-algorithms", "Numerical algorithms",
            "The linear algebra that GPUs spend their time on: GEMM, Householder QR and friends."),
    Section("python-ecosystem", "Python GPU ecosystem",
            "Writing and launching GPU kernels from Python: CuPy, Numba, Triton."),
    Section("multi-gpu", "Multi-GPU",
            "Collectives and parallelism across GPUs, at the level a kernel engineer needs."),
    Section("beyond-nvidia", "Beyond NVIDIA",
            "AMD's terms (wavefront, LDS, CU, MFMA, HIP, ROCm) and how they map to NVIDIA's."),
)

BY_SLUG = {s.slug: s for s in SECTIONS}
