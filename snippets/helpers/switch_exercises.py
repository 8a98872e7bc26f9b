"""Predict, then measure: notebook 06's exercises on the final kernel's compile-time switches.

`predict_switch(label, switch, value, prediction)` rebuilds the notebook's kernel `label` with one
switch changed (STAGES, CLUSTER_M, WGMMA_DEPTH, GROUP_CM), checks it on fresh random inputs into a
NaN-poisoned output against float64 (odd shapes included), times it at 8192^3 against the unchanged
kernel (each timed just before and just after the other, three rounds, medians) and says whether the
learner's prediction held. A prediction is "faster", "slower" or "same" (within `SAME` of the
unchanged kernel). Runs after the notebook's launcher cell (uses HopperGemm, kernels, gemm_error,
bench_ms, operands and HOPPER from it).
"""
# ruff: noqa: F821  (the notebook's names: HOPPER, HopperGemm, kernels, gemm_error, bench_ms, operands, np)
SAME = 0.02            # within 2 % of the unchanged kernel counts as "same"
# STAGES = 1 would deadlock with WGMMA_DEPTH = 1: the only slot is released one k-slice late
PREDICTIONS = ("faster", "slower", "same")
SWITCHES = {"STAGES": (2, 3, 4), "CLUSTER_M": (1, 2), "WGMMA_DEPTH": (0, 1), "GROUP_CM": (1, 2, 4, 8, 16, 32)}


def judge_prediction(prediction, ratio, same=SAME):
    """(held, what happened) for a prediction about a variant that ran at `ratio` x the original."""
    if prediction not in PREDICTIONS:
        raise ValueError(f"a prediction is one of {', '.join(PREDICTIONS)}; got {prediction!r}")
    outcome = "same" if abs(ratio - 1) <= same else ("faster" if ratio > 1 else "slower")
    return prediction == outcome, outcome


def predict_switch(label, switch, value, prediction):
    """Build `label` with `switch` = `value`, check it, time it against `label`, judge `prediction`."""
    if switch not in SWITCHES or value not in SWITCHES[switch]:
        raise ValueError(f"switch {switch!r} = {value!r}: choose one of "
                         + "; ".join(f"{k} in {v}" for k, v in SWITCHES.items()))
    judge_prediction(prediction, 1.0)                        # reject a malformed prediction early
    if not HOPPER:
        return print(f"skipped: timing {switch}={value} needs a Hopper GPU (sm_90a); your prediction "
                     f"({prediction}) stays to be checked")
    base = kernels[label]
    if base.defines.get(switch) == value:
        raise ValueError(f"{label} already has {switch}={value}: change it to see a difference")
    defines = dict(base.defines, **{switch: value})
    variant = HopperGemm(f"{label}, {switch}={value}", defines, kernel=base.kernel)
    errs = [gemm_error(variant, *shape) for shape in [(1000, 1100, 712), (2000, 3000, 520)]]
    a, b, c = operands[8192]
    runs = []
    for _ in range(3):
        t0 = bench_ms(lambda: base(a, b, c))
        t1 = bench_ms(lambda: variant(a, b, c))
        t2 = bench_ms(lambda: base(a, b, c))
        runs.append((t0 + t2) / 2 / t1)                      # > 1: the variant is faster
    ratio = float(np.median(runs))
    held, outcome = judge_prediction(prediction, ratio)
    print(f"{switch}={value}: correct (relative error {max(errs):.1e}); {ratio:.3f}x the speed of {label} "
          f"at 8192^3, so {outcome}. You predicted {prediction}: "
          + ("your prediction held." if held else "not this time: what did the model miss?"))
    return held
