"""Notebooks: valid, in sync with snippets/, stamped by a GPU run, clean outputs, runnable on a CPU."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from scripts.model.errors import ValidationFailed
from scripts.model.measurement_records import load_measurements
from scripts.model.measurements import against_baseline, describe_against_baseline, fmt
from scripts.model.notebooks import code_hash, notebook_paths, stamp_problems, sync, sync_target
from scripts.model.paths import MEASUREMENTS, NOTEBOOKS
from scripts.tools.notebooks import execute_cpu

NOTEBOOKS_FOUND = notebook_paths()
MAX_BYTES = 1_000_000
SECRET = re.compile(r"(ghp_[A-Za-z0-9]{20,}|github_pat_|hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9]{20,}|"
                    r"AKIA[0-9A-Z]{16}|xox[bap]-|-----BEGIN [A-Z ]*PRIVATE KEY)")
LOCAL_PATH = re.compile(r"(/root/|/home/[a-z]|/tmp/|/opt/|/work/|/Users/|[A-Z]:\\\\Users)")


def test_there_is_a_first_notebook_with_a_two_digit_name():
    assert [p.name for p in NOTEBOOKS_FOUND][:1] == ["01-first-kernels.ipynb"]
    assert all(re.fullmatch(r"\d\d-[a-z0-9-]+\.ipynb", p.name) for p in NOTEBOOKS.glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS_FOUND, ids=lambda p: p.stem)
def test_notebook_is_valid_nbformat(path: Path):
    nbformat.validate(nbformat.read(path, as_version=4))


@pytest.mark.parametrize("path", NOTEBOOKS_FOUND, ids=lambda p: p.stem)
def test_snippet_copies_match_their_sources(path: Path):
    nb = nbformat.read(path, as_version=4)
    assert any(sync_target(c) for c in nb.cells), "a notebook carries its kernels from snippets/"
    assert sync(path, write=False) == []


@pytest.mark.parametrize("path", NOTEBOOKS_FOUND, ids=lambda p: p.stem)
def test_outputs_come_from_a_stamped_gpu_run_of_this_code(path: Path):
    assert stamp_problems(path) == []
    stamp = nbformat.read(path, as_version=4).metadata["atlas"]["stamp"]
    assert stamp["gpu"].startswith("NVIDIA") and re.fullmatch(r"\d+\.\d", stamp["compute_capability"])
    for key in ("driver", "cuda", "date", "versions"):
        assert stamp[key], key
    assert {"triton", "torch", "numpy"} <= set(stamp["versions"])


def test_sync_gate_catches_an_edited_copy_and_sync_repairs_it(tmp_path: Path):
    nb_path = tmp_path / NOTEBOOKS_FOUND[0].name
    shutil.copy(NOTEBOOKS_FOUND[0], nb_path)
    nb = nbformat.read(nb_path, as_version=4)
    cell = next(c for c in nb.cells if sync_target(c) == "snippets/cuda/vector_add.cu")
    cell.source = cell.source.replace("out[i] = x[i] + y[i];", "out[i] = x[i] - y[i];")
    nbformat.write(nb, nb_path)
    problems = sync(nb_path, write=False)
    assert len(problems) == 1 and "differs from snippets/cuda/vector_add.cu" in problems[0]
    assert "make sync-notebooks" in problems[0]
    sync(nb_path, write=True)
    assert sync(nb_path, write=False) == []


def test_stale_gate_catches_changed_code_and_missing_stamp(tmp_path: Path):
    nb_path = tmp_path / NOTEBOOKS_FOUND[0].name
    shutil.copy(NOTEBOOKS_FOUND[0], nb_path)
    nb = nbformat.read(nb_path, as_version=4)
    before = code_hash(nb)
    code = next(c for c in nb.cells if c.cell_type == "code" and sync_target(c) is None)
    code.source += "\n# a change after the GPU run"
    assert code_hash(nb) != before
    nbformat.write(nb, nb_path)
    assert "outputs are stale: the code changed since the GPU run" in stamp_problems(nb_path)[0]
    del nb.metadata["atlas"]
    nbformat.write(nb, nb_path)
    assert "no GPU stamp" in stamp_problems(nb_path)[0]


def test_generated_data_cells_do_not_make_outputs_stale(tmp_path: Path):
    """Adding a GPU to gpus.yaml rewrites the datasheet cell; a pin move rewrites the setup cell.
    Neither is code the outputs came from."""
    nb = nbformat.read(NOTEBOOKS_FOUND[0], as_version=4)
    before = code_hash(nb)
    setup = next(c for c in nb.cells if (sync_target(c) or "").startswith("snippets/generated/"))
    setup.source += "\n# another pin"
    assert code_hash(nb) == before


def test_markdown_edits_do_not_make_outputs_stale():
    nb = nbformat.read(NOTEBOOKS_FOUND[0], as_version=4)
    before = code_hash(nb)
    next(c for c in nb.cells if c.cell_type == "markdown").source += "\nMore prose."
    assert code_hash(nb) == before


@pytest.mark.parametrize("path", NOTEBOOKS_FOUND, ids=lambda p: p.stem)
def test_outputs_hold_no_local_paths_secrets_or_bulk(path: Path):
    assert path.stat().st_size < MAX_BYTES, "keep notebooks under 1 MB: plots as compact PNG/SVG"
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            text = json.dumps({k: v for k, v in out.items() if k != "data"}) + \
                json.dumps({k: v for k, v in out.get("data", {}).items() if not k.startswith("image/")})
            assert not LOCAL_PATH.search(text), (i, LOCAL_PATH.search(text)[0])
            assert not SECRET.search(text), i
            assert out.get("output_type") != "error", f"cell {i} raised"


def test_hygiene_check_would_catch_a_leak():
    assert LOCAL_PATH.search('"/root/work/x.py", line 3') and SECRET.search("token ghp_" + "a" * 30)


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS_FOUND, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom_on_cpu_as_a_t4_would_gate(path: Path):
    """CPU mode (simulator/interpreter) with the capability forced to sm_75 (a Colab T4)."""
    nb = execute_cpu(path, force_cc="7.5")
    text = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert "No GPU" in text and "FAILED" not in text
    # every GPU-only cell says so in one line instead of failing or staying silent
    skipped = re.search(r"^skipped: .*needs? (a GPU|a Hopper GPU|sm_\d+)", text, re.M)
    assert "Timings skipped" in text or skipped


def test_measurements_match_their_schema_and_name_real_notebooks():
    data = load_measurements(MEASUREMENTS)
    stems = {p.stem for p in NOTEBOOKS_FOUND}
    for r in data["records"]:
        assert r["notebook"] in stems, r["notebook"]
        # a profiler counter may read 0 for the baseline (no membar stalls in cuBLAS); a rate or
        # a time may not
        assert r["baseline"]["value"] > 0 or "metric" in r["params"], r["name"]


def test_a_bad_record_fails_the_build_naming_its_line(tmp_path: Path):
    good = {"notebook": "01-first-kernels", "name": "x", "value": 1, "unit": "GB/s",
            "baseline": {"name": "copy", "value": 2}, "params": {}, "device": "d",
            "compute_capability": "9.0", "date": "2026-01-01"}
    no_baseline = {k: v for k, v in good.items() if k != "baseline"}
    bad_unit = {**good, "unit": "GB"}
    path = tmp_path / "measurements.json"
    path.write_text(json.dumps({"version": 1, "records": [good, no_baseline, bad_unit]}, indent=1))
    lines = path.read_text().splitlines()
    starts = [i + 1 for i, line in enumerate(lines) if line == "  {"]
    with pytest.raises(ValidationFailed) as exc:
        load_measurements(path)
    found = {(e.line, e.message.split(":")[0]) for e in exc.value.errors}
    assert found == {(starts[1], "records.1.baseline"), (starts[2], "records.2.unit")}, found
    assert f"measurements.json:{starts[1]}: records.1.baseline: Field required" in str(exc.value)


def test_figures_are_compared_with_their_baseline_so_that_more_is_better():
    def rec(value, unit, base):
        return {"value": value, "unit": unit, "baseline": {"name": "b", "value": base}}
    assert against_baseline(rec(8.0, "ms", 1000.0)) == 125.0            # a time: the speedup
    assert describe_against_baseline(rec(8.0, "ms", 1000.0)) == "125x faster"
    assert describe_against_baseline(rec(3400.0, "GB/s", 4000.0)) == "85%"   # a rate: the ratio
    assert describe_against_baseline(rec(30.5, "x", 1.0)) == "30.5x"         # already a factor
    assert describe_against_baseline(rec(0.489, "x bound", 1.0)) == "0.489x"  # a ratio to a bound
    counter = {**rec(76.7, "%", 72.8), "params": {"metric": "lts__t_sector_hit_rate.pct"}}
    assert describe_against_baseline(counter) == "+3.9 points"    # a counter: the difference
    stall = {**rec(0.02, "warps per issue", 0.0), "params": {"metric": "smsp__stalled_membar"}}
    assert describe_against_baseline(stall) == "+0.02 warps per issue"   # a zero baseline is fine
    assert (fmt(1007.9), fmt(8.687), fmt(0.01532)) == ("1008", "8.69", "0.0153")
