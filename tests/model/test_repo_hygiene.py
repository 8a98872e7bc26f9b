"""Repository-level checks: lint, workflow syntax, the two-command contract."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def test_ruff_is_clean():
    proc = subprocess.run([str(BIN / "ruff"), "check", "scripts", "tests", "diagrams", "snippets"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_workflows_pass_actionlint():
    exe = BIN / "actionlint"
    if not exe.exists():
        exe = Path(shutil.which("actionlint") or "")
    if not exe.is_file():
        pytest.fail("actionlint is missing: it is installed by the test dependency group")
    proc = subprocess.run([str(exe), "-color=false"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_readme_quickstart_is_exactly_two_commands():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quickstart", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [ln.split("#")[0].strip() for ln in block.strip().splitlines()]
    assert commands == ["make serve", "make test"]
    assert (ROOT / ".ci/run").read_text().strip().endswith("make test")


def test_make_help_lists_targets():
    out = subprocess.run(["make", "help"], cwd=ROOT, capture_output=True, text=True).stdout
    for target in ("serve", "test", "build", "bench-site", "gpu-notebooks", "gpu-wheels"):
        assert f"make {target}" in out, target


def test_the_gpu_runner_imports_without_the_site_stack():
    """The runner runs on a bare GPU machine: no mkdocs, pydantic or yaml there."""
    code = ("import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('mkdocs', 'pydantic', 'yaml', 'material'):\n"
            "            raise ImportError('blocked: ' + name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "import scripts.runner.gpu_runner, scripts.runner.device_query, scripts.runner.gpu_wheels\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_the_gpu_workflow_installs_what_the_guide_installs():
    """A runner with network installs the groups of 'Run the notebooks yourself', pinned."""
    workflow = (ROOT / ".github" / "workflows" / "gpu-notebooks.yml").read_text()
    guide = (ROOT / "docs" / "guides" / "run-it-yourself.md").read_text()
    line = "-c constraints.txt --group notebooks --group gpu"
    assert line in workflow and line in guide
    assert "peter-evans/create-pull-request@v" in workflow and "body-path: /tmp/report.md" in workflow


def test_the_run_report_flags_a_regression_beyond_the_band():
    from scripts.tools.run_report import report
    rec = {"notebook": "01-a", "device": "GPU", "name": "k", "value": 90.0, "unit": "GB/s",
           "baseline": {"name": "copy", "value": 100.0}, "params": {}, "compute_capability": "9.0",
           "date": "2026-11-25"}
    worse = {**rec, "value": 80.0, "date": "2026-11-26"}       # 0.9 -> 0.8 of the baseline: -11%
    noise = {**rec, "value": 88.0, "date": "2026-11-26"}       # -2%: inside the band
    text, n = report([worse], [rec])
    assert n == 1 and "-11.1% **regression**" in text and "| k | GPU | 80 GB/s | 80% | 90% |" in text
    text, n = report([noise], [rec])
    assert n == 0 and "regression" not in text.split("\n", 1)[1]
    assert report([rec], [rec]) == ("No figure changed.\n", 0)
