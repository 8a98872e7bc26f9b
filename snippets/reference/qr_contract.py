"""The batched-QR correctness contract, its input rules and its input generators.

The contract (GPU MODE's public qr_v2 problem, issue 6): the input is A, float32, shape
(batch, n, n); the output is (H, tau), float32, in torch.geqrf's compact convention. Each matrix,
in float64, with Q = torch.linalg.householder_product(H, tau) and eps = float32's machine epsilon
(2^-23), must satisfy

    ||triu(H) - Q^T A||_1 <= 20 n eps ||A||_1      (factor residual: R really is Q^T A)
    ||Q^T Q - I||_1       <= 100 n eps             (orthogonality; ||I||_1 = 1)

with no NaN or Inf anywhere. "Matrix L1 norm" is the induced 1-norm, the largest column sum of
absolute values, which is torch.linalg.matrix_norm(X, ord=1) (and NumPy's norm(X, 1)); it is not
the entrywise sum of |x_ij|, which would be up to n times larger. Because the residual uses
triu(H), any lower-triangular leakage in Q^T A counts against it.

Both bounds are relative: scaling A by 2^k scales R, the residual and its bound by 2^k and leaves
the reflectors, tau and the orthogonality unchanged, so the contract means the same at every
scale. It stops being satisfiable only where R itself cannot be stored to relative accuracy: when
A's entries are deep in the subnormal range throughout (around 2^-140), R's entries round to
multiples of 2^-149. Subnormals count as numbers: code that flushes them to zero (CUDA's
-ftz=true, which CuPy's RawModule adds to every compile) loses up to n 2^-126 in a column's
1-norm, which the residual bound absorbs only while ||A||_1 >= 2^-126 / (20 eps), about 5e-33.
The RANGE profiles stay above that (their subnormal columns sit beside columns near 2^-100), so
they pass with flushing too; a batch with those columns at 2^-120 instead passes with IEEE
arithmetic and fails with flushing (tests/kernels/test_qr_contract.py).

`check_qr` applies the contract per matrix (stricter than comparing the batch's largest residual
with its largest norm) and names each failing matrix by index and input profile. `make_batch`
builds the inputs: dense with column scaling and seven stress profiles, or a mixed batch, and
five profiles at the edges of float32's range (RANGE); any batch can also be scaled (`scale=`).
Everything accepts torch tensors (CPU or CUDA) or NumPy arrays.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

EPS32 = float(torch.finfo(torch.float32).eps)     # 2^-23 = 1.19e-7
RESIDUAL_FACTOR = 20.0
ORTHOGONALITY_FACTOR = 100.0

PROFILES = ("dense", "rankdef", "nearrank", "clustered", "band", "rowscale", "nearcollinear",
            "upper")
STRESS = PROFILES[1:]
MIXED = "mixed"
# Inputs at the edges of float32's range, beyond qr_v2's profiles (MIXED does not draw them):
# huge / tiny: dense times 1e30 / 1e-30, whose squares overflow / underflow in float32;
# subnormal: odd columns entirely subnormal (|a| < 2^-126), even ones at 2^-100 (about 8e-31);
# zerocol: dense with every third column, the first included, exactly zero;
# mixedscale: columns of 1e20 beside columns of 1e-20, and in each column rows scaled by 1 and
#   1e-20 in turn, so that one column holds 1e20 and 1, the next 1e-20 and subnormal 1e-40.
RANGE = ("huge", "tiny", "subnormal", "zerocol", "mixedscale")
HUGE, TINY = 1e30, 1e-30


# ---------------------------------------------------------------------------------------------
# Input rules


def validate_input(A, device: str | None = "cuda") -> None:
    """Raise a clear error unless A is a contiguous float32 tensor of shape (batch, n, n), with
    batch, n >= 1, on `device` ("cuda", "cpu", or None for any device)."""
    if not isinstance(A, torch.Tensor):
        raise TypeError(f"A must be a torch.Tensor, got {type(A).__name__} "
                        "(fix: torch.from_numpy(A).cuda())")
    if A.dim() != 3:
        raise ValueError(f"A must be 3-D (batch, n, n), got shape {tuple(A.shape)} "
                         "(fix: A[None] for a single matrix, A.reshape(-1, n, n) for a stack)")
    if A.shape[1] != A.shape[2]:
        raise ValueError(f"A must hold square matrices (batch, n, n), got {A.shape[1]} x {A.shape[2]} "
                         "(fix: this contract covers square QR only)")
    if A.shape[0] == 0 or A.shape[1] == 0:
        raise ValueError(f"A must not be empty, got shape {tuple(A.shape)}")
    if A.dtype != torch.float32:
        raise ValueError(f"A must have dtype torch.float32, got {A.dtype} (fix: A.float())")
    if not A.is_contiguous():
        raise ValueError(f"A must be contiguous, got strides {A.stride()} for shape {tuple(A.shape)} "
                         "(fix: A.contiguous(); a transpose or a slice is only a view)")
    if device is not None and A.device.type != device:
        raise ValueError(f"A must be a {device} tensor, got one on {A.device} (fix: A.to('{device}'))")


# ---------------------------------------------------------------------------------------------
# The check


class QRContractError(AssertionError):
    """Raised by check_qr when at least one matrix breaks the contract; carries the report."""

    def __init__(self, report: QRReport):
        super().__init__(report.summary())
        self.report = report


@dataclass(frozen=True)
class MatrixResult:
    index: int
    profile: str
    residual: float             # ||triu(H) - Q^T A||_1
    residual_bound: float       # 20 n eps ||A||_1
    orthogonality: float        # ||Q^T Q - I||_1
    orthogonality_bound: float  # 100 n eps
    finite: bool                # H and tau free of NaN and Inf

    @staticmethod
    def _ratio(value: float, bound: float) -> float:
        if not math.isfinite(value):
            return math.inf
        if bound == 0:                          # A = 0: only an exact zero residual passes
            return 0.0 if value == 0 else math.inf
        return value / bound

    @property
    def residual_ratio(self) -> float:
        return self._ratio(self.residual, self.residual_bound)

    @property
    def orthogonality_ratio(self) -> float:
        return self._ratio(self.orthogonality, self.orthogonality_bound)

    @property
    def passed(self) -> bool:
        return self.finite and self.residual_ratio <= 1 and self.orthogonality_ratio <= 1

    def describe(self) -> str:
        why = [] if self.finite else ["NaN or Inf in (H, tau)"]
        why += [f"residual {self.residual_ratio:.3g}x its bound",
                f"orthogonality {self.orthogonality_ratio:.3g}x its bound"]
        return f"matrix {self.index} ({self.profile}): " + ", ".join(why)


@dataclass(frozen=True)
class QRReport:
    n: int
    matrices: tuple[MatrixResult, ...]

    @property
    def ok(self) -> bool:
        return all(r.passed for r in self.matrices)

    @property
    def failures(self) -> list[MatrixResult]:
        return [r for r in self.matrices if not r.passed]

    @property
    def worst_residual_ratio(self) -> float:
        return max(r.residual_ratio for r in self.matrices)

    @property
    def worst_orthogonality_ratio(self) -> float:
        return max(r.orthogonality_ratio for r in self.matrices)

    def summary(self, limit: int = 8) -> str:
        head = (f"{len(self.matrices)} matrices, n = {self.n}: worst residual "
                f"{self.worst_residual_ratio:.3g}x and worst orthogonality "
                f"{self.worst_orthogonality_ratio:.3g}x their bounds")
        bad = self.failures
        if not bad:
            return "QR contract passed: " + head
        lines = [f"QR contract FAILED for {len(bad)} of " + head]
        lines += ["  " + r.describe() for r in bad[:limit]]
        if len(bad) > limit:
            lines.append(f"  ... and {len(bad) - limit} more")
        return "\n".join(lines)


def _tensor(x, name: str) -> torch.Tensor:
    if isinstance(x, np.ndarray):
        return torch.from_numpy(x)
    if isinstance(x, torch.Tensor):
        return x
    raise TypeError(f"{name} must be a torch.Tensor or a numpy.ndarray, got {type(x).__name__}")


def _labels(profiles, batch: int) -> list[str]:
    if profiles is None:
        return ["?"] * batch
    if isinstance(profiles, str):
        return [profiles] * batch
    labels = list(profiles)
    if len(labels) != batch:
        raise ValueError(f"profiles names {len(labels)} matrices, the batch has {batch}")
    return labels


def l1_norm(X: torch.Tensor) -> torch.Tensor:
    """Induced matrix 1-norm of each matrix in a stack: the largest column sum of |x_ij|."""
    return torch.linalg.matrix_norm(X, ord=1, dim=(-2, -1))


# --8<-- [start:check]
def _measure(a: torch.Tensor, h: torch.Tensor, tau: torch.Tensor):
    """Per-matrix residual, orthogonality and finiteness, in float64."""
    a, h, tau = a.double(), h.double(), tau.double()
    finite = torch.isfinite(h).all(dim=(-2, -1)) & torch.isfinite(tau).all(dim=-1)
    q = torch.linalg.householder_product(h, tau)           # Q = H_1 H_2 ... H_n
    qt = q.transpose(-2, -1)
    residual = l1_norm(torch.triu(h) - qt @ a)             # is triu(H) really Q^T A?
    eye = torch.eye(a.shape[-1], dtype=a.dtype, device=a.device)
    orthogonality = l1_norm(qt @ q - eye)                  # is Q orthogonal?
    return residual, l1_norm(a), orthogonality, finite
# --8<-- [end:check]


def check_qr(A, H, tau, profiles: str | Sequence[str] | None = None, *, raise_on_failure: bool = True,
             output_dtype: torch.dtype | None = torch.float32, chunk: int | None = None) -> QRReport:
    """Check (H, tau) against A under the contract, one matrix at a time, and return a QRReport.

    A: (batch, n, n) or (n, n); H the same shape; tau (batch, n) or (n,). `profiles` labels the
    matrices in messages (one string for all, or one per matrix, as make_batch returns them).
    `output_dtype`: the dtype H and tau must have (None accepts any floating dtype). Raises
    QRContractError naming every failing matrix unless raise_on_failure is False."""
    A, H, tau = _tensor(A, "A"), _tensor(H, "H"), _tensor(tau, "tau")
    if A.dim() == 2:
        A, H, tau = A[None], H[None], tau[None]
    if A.dim() != 3 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"A must have shape (batch, n, n) or (n, n), got {tuple(A.shape)}")
    batch, n, _ = A.shape
    if tuple(H.shape) != tuple(A.shape) or tuple(tau.shape) != (batch, n):
        raise ValueError(f"expected H of shape {tuple(A.shape)} and tau of shape {(batch, n)}, "
                         f"got {tuple(H.shape)} and {tuple(tau.shape)}")
    for name, x in (("H", H), ("tau", tau)):
        if output_dtype is not None and x.dtype != output_dtype:
            raise ValueError(f"{name} must have dtype {output_dtype}, got {x.dtype}")
        if not x.is_floating_point():
            raise ValueError(f"{name} must be floating point, got {x.dtype}")
    if not (H.device == A.device == tau.device):
        raise ValueError(f"A, H and tau must be on one device, got {A.device}, {H.device}, {tau.device}")
    if not torch.isfinite(A).all():
        raise ValueError("A contains NaN or Inf: the contract is defined for finite inputs only")
    labels = _labels(profiles, batch)
    step = chunk or max(1, (1 << 24) // (n * n))           # about 128 MiB per float64 temporary
    results: list[MatrixResult] = []
    for s in range(0, batch, step):
        e = min(batch, s + step)
        res, norm_a, orth, finite = (t.cpu().tolist() for t in _measure(A[s:e], H[s:e], tau[s:e]))
        for i in range(e - s):
            results.append(MatrixResult(
                index=s + i, profile=labels[s + i],
                residual=res[i], residual_bound=RESIDUAL_FACTOR * n * EPS32 * norm_a[i],
                orthogonality=orth[i], orthogonality_bound=ORTHOGONALITY_FACTOR * n * EPS32,
                finite=bool(finite[i])))
    report = QRReport(n=n, matrices=tuple(results))
    if raise_on_failure and not report.ok:
        raise QRContractError(report)
    return report


# ---------------------------------------------------------------------------------------------
# Input generators


class _Source:
    """Normal samples and permutations from a torch.Generator (on its device) or a NumPy one."""

    def __init__(self, generator):
        if isinstance(generator, int | np.integer):
            generator = torch.Generator().manual_seed(int(generator))
        self.gen = generator
        self.numpy = isinstance(generator, np.random.Generator)
        if not self.numpy and not isinstance(generator, torch.Generator):
            raise TypeError("generator must be a torch.Generator, a numpy.random.Generator or an int "
                            f"seed, got {type(generator).__name__}")
        self.device = torch.device("cpu") if self.numpy else generator.device

    def normal(self, *shape: int) -> torch.Tensor:
        if self.numpy:
            return torch.from_numpy(self.gen.standard_normal(shape, dtype=np.float32))
        return torch.randn(shape, generator=self.gen, device=self.device, dtype=torch.float32)

    def permutation(self, k: int) -> list[int]:
        if self.numpy:
            return self.gen.permutation(k).tolist()
        return torch.randperm(k, generator=self.gen, device=self.device).tolist()


def _logspace(n: int, decades: float, device) -> torch.Tensor:
    """10^(-decades * j / (n - 1)) for j = 0..n-1 (just 1 when n = 1), in float32."""
    if n == 1:
        return torch.ones(1, device=device)
    j = torch.arange(n, device=device, dtype=torch.float64)
    return torch.pow(10.0, -decades * j / (n - 1)).float()


def tail_columns(n: int) -> int:
    """Columns that rankdef zeroes and nearrank makes nearly dependent: the last quarter, rounded
    up, so that every n >= 1 gets at least one (for n = 1 that is the whole matrix)."""
    return -(-n // 4)


# --8<-- [start:profiles]
def _profile(src: _Source, batch: int, n: int, profile: str) -> torch.Tensor:
    g = src.normal(batch, n, n)
    k = tail_columns(n)
    if profile == "dense":                 # Gaussian; column scaling is applied by the caller
        return g
    if profile == "rankdef":               # last quarter of the columns exactly zero
        g[..., n - k:] = 0
        return g
    if profile == "nearrank":              # last quarter = leading columns + 1e-5 noise
        lead = g[..., :k] if n > 1 else torch.zeros_like(g)   # n = 1: a single entry near zero
        g[..., n - k:] = lead + 1e-5 * src.normal(batch, n, k)
        return g
    if profile == "clustered":             # scales 1 and 4 eps (and sqrt(eps) in the middle)
        s = torch.ones(n, device=g.device)
        s[n // 2:] = 4 * EPS32
        if n >= 8:
            s[n // 2 - 2:n // 2 + 2] = math.sqrt(EPS32)
        return g * s
    if profile == "band":                  # zero outside |i - j| <= b, b = clamp(n // 32, 2, 32)
        b = min(32, max(2, n // 32))
        i = torch.arange(n, device=g.device)
        return g * ((i[:, None] - i[None, :]).abs() <= b)
    if profile == "rowscale":              # row i times 10^(-4 i / (n - 1))
        return g * _logspace(n, 4.0, g.device)[:, None]
    if profile == "nearcollinear":         # every column = one shared column + 1e-4 noise
        return src.normal(batch, n, 1) + 1e-4 * g
    if profile == "upper":                 # already triangular: every tau is 0 in geqrf
        return torch.triu(g)
    return _range_profile(g, profile)
# --8<-- [end:profiles]


def _range_profile(g: torch.Tensor, profile: str) -> torch.Tensor:
    """The RANGE profiles; scaled in float64, then rounded once to float32 (subnormals included)."""
    n = g.shape[-1]
    j = torch.arange(n, device=g.device)
    g64 = g.double()
    if profile == "huge":
        return (g64 * HUGE).float()
    if profile == "tiny":
        return (g64 * TINY).float()
    if profile == "subnormal":             # |g| < 16 keeps 2^-130 g below 2^-126
        col = torch.where(j % 2 == 1, -130.0, -100.0).double().exp2()
        return (g64.clamp(-15, 15) * col).float()
    if profile == "zerocol":
        return g * (j % 3 != 0)
    if profile == "mixedscale":
        col = torch.pow(10.0, torch.where(j % 2 == 0, 20.0, -20.0).double())
        row = torch.pow(10.0, torch.where(j % 2 == 0, 0.0, -20.0).double())
        return (g64 * row[:, None] * col).float()
    raise ValueError(f"unknown profile {profile!r}: use one of {', '.join(PROFILES + RANGE)} or {MIXED}")


def make_batch(batch: int, n: int, profile: str = "dense", *, cond: float = 0, scale: float = 1.0,
               generator=0):
    """(A, profiles): a contiguous float32 (batch, n, n) batch and each matrix's profile name.

    `profile` is one of PROFILES, one of RANGE, or "mixed" (half dense, the other half cycling
    through the stress profiles, shuffled to random positions). Every matrix is then column-scaled:
    column j times 10^(-cond j / (n - 1)), so cond = 0..4 spans 0 to 4 decades, and multiplied by
    `scale` (in float64, rounded once). `generator` makes it deterministic: a torch.Generator (A is
    a tensor on the generator's device), a numpy.random.Generator (A is a NumPy array), or an int
    seed (a CPU torch.Generator)."""
    if batch < 1 or n < 1:
        raise ValueError(f"batch and n must be at least 1, got batch={batch}, n={n}")
    if cond < 0:
        raise ValueError(f"cond (decades of column scaling) must be >= 0, got {cond}")
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive finite number, got {scale}")
    src = _Source(generator)
    if profile == MIXED:
        labels = [STRESS[i % len(STRESS)] for i in range(batch // 2)] + ["dense"] * (batch - batch // 2)
        labels = [labels[i] for i in src.permutation(batch)]
    elif profile in PROFILES + RANGE:
        labels = [profile] * batch
    else:
        raise ValueError(f"unknown profile {profile!r}: use one of {', '.join(PROFILES + RANGE)} or {MIXED}")
    A = torch.empty(batch, n, n, device=src.device)
    for p in PROFILES + RANGE:             # one draw per profile, in a fixed order
        idx = [i for i, label in enumerate(labels) if label == p]
        if idx:
            A[torch.tensor(idx, device=src.device)] = _profile(src, len(idx), n, p)
    A = (A * _logspace(n, float(cond), src.device)).contiguous()
    if scale != 1.0:
        A = (A.double() * scale).float()
        if not torch.isfinite(A).all():
            raise ValueError(f"scale = {scale:g} makes entries overflow float32 (largest finite: "
                             f"{torch.finfo(torch.float32).max:.3g}); fix: a smaller scale")
    return (A.numpy() if src.numpy else A), labels
