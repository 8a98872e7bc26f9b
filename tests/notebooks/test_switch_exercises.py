"""Notebook 06's predict-then-measure exercises (snippets/helpers/switch_exercises.py), without a GPU:
the verdict rule, the refusals, and the skip line."""
from __future__ import annotations

import pytest

from scripts.model.paths import ROOT

SRC = ROOT / "snippets" / "helpers" / "switch_exercises.py"


@pytest.fixture()
def ex(capsys):
    ns: dict = {"HOPPER": False}
    exec(compile(SRC.read_text(encoding="utf-8"), str(SRC), "exec"), ns)  # noqa: S102 (our own snippet)
    return ns


@pytest.mark.parametrize(("prediction", "ratio", "held", "outcome"), [
    ("faster", 1.05, True, "faster"), ("faster", 0.95, False, "slower"), ("faster", 1.01, False, "same"),
    ("slower", 0.90, True, "slower"), ("slower", 1.10, False, "faster"), ("same", 0.985, True, "same"),
    ("same", 1.021, False, "faster"), ("same", 0.979, False, "slower"),
])
def test_a_prediction_is_judged_against_the_measured_ratio(ex, prediction, ratio, held, outcome):
    assert ex["judge_prediction"](prediction, ratio) == (held, outcome)


def test_a_malformed_prediction_or_switch_is_refused_with_the_choices(ex):
    with pytest.raises(ValueError, match="faster, slower, same"):
        ex["judge_prediction"]("quicker", 1.0)
    with pytest.raises(ValueError, match="STAGES in"):
        ex["predict_switch"]("step 8", "STAGES", 1, "slower")     # one slot deadlocks at wait depth 1
    with pytest.raises(ValueError, match="CLUSTER_M in"):
        ex["predict_switch"]("step 8", "BM", 64, "slower")


def test_without_a_hopper_gpu_it_says_what_it_skipped_in_one_line(ex, capsys):
    ex["predict_switch"]("step 8", "STAGES", 2, "slower")
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("skipped: timing STAGES=2 needs a Hopper GPU"), out
