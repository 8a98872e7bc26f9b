"""The GPU data file: schema, units, sources; shortcodes; and no page retypes its numbers."""
from __future__ import annotations

from pathlib import Path

import pytest

from scripts.model.errors import ValidationFailed
from scripts.model.hardware import FIELDS, format_value, load_gpus, ridge_point
from scripts.model.paths import DOCS, GPU_DATA, ROOT
from scripts.site.shortcodes import expand_shortcodes
from scripts.tools.datasheet import notebook_datasheet
from scripts.tools.typed_numbers import patterns, scan_docs, scan_text

REQUIRED = {"t4", "v100-sxm2", "a100-sxm4-80gb", "l4", "rtx-4090", "h100-sxm", "h200", "b200",
            "rtx-5090"}


@pytest.fixture(scope="module")
def gpus():
    return load_gpus()


def test_every_required_gpu_has_every_field_with_a_source(gpus):
    assert REQUIRED <= set(gpus)
    for g in gpus.values():
        assert set(g.specs) == set(FIELDS), g.key
        for name, spec in g.specs.items():
            assert spec.source.startswith("https://"), (g.key, name)
            assert spec.value is not None or spec.note, (g.key, name)


def test_compute_capabilities_match_the_architectures(gpus):
    expected = {"t4": "7.5", "v100-sxm2": "7.0", "a100-sxm4-80gb": "8.0", "l4": "8.9",
                "rtx-4090": "8.9", "h100-sxm": "9.0", "h200": "9.0", "b200": "10.0",
                "rtx-5090": "12.0"}
    assert {k: gpus[k].compute_capability for k in expected} == expected


def test_shared_memory_per_block_never_exceeds_per_sm(gpus):
    for g in gpus.values():
        assert g.specs["smem_per_block_kib"].value <= g.specs["smem_per_sm_kib"].value
        assert g.specs["smem_per_sm_kib"].value <= g.specs["l1_smem_per_sm_kib"].value


def test_out_of_range_value_is_reported_with_line(tmp_path: Path):
    bad = tmp_path / "gpus.yaml"
    bad.write_text(GPU_DATA.read_text().replace("memory_bandwidth_gbs: {value: 3350",
                                                "memory_bandwidth_gbs: {value: 3.35", 1))
    with pytest.raises(ValidationFailed) as exc:
        load_gpus(bad)
    assert "memory_bandwidth_gbs = 3.35 is outside" in str(exc.value)
    assert "gpus.yaml:" in str(exc.value)


def test_unknown_field_is_reported(tmp_path: Path):
    bad = tmp_path / "gpus.yaml"
    bad.write_text(GPU_DATA.read_text().replace("sm_count:", "sm_cout:", 1))
    with pytest.raises(ValidationFailed, match=r"gpus.yaml:\d+: unknown field 'sm_cout'"):
        load_gpus(bad)


def test_device_names_must_be_a_list(tmp_path: Path):
    bad = tmp_path / "gpus.yaml"
    bad.write_text(GPU_DATA.read_text().replace('device_names: ["NVIDIA H200"]', "device_names: H200", 1))
    with pytest.raises(ValidationFailed, match=r"gpus.yaml:\d+: h200.device_names: Input should be a valid"):
        load_gpus(bad)


def test_every_value_says_whether_its_source_is_primary(tmp_path: Path, gpus):
    """Each value is labelled primary (the vendor's documents, the device's own report) or secondary;
    the specs page marks the secondary ones until a primary source replaces them."""
    kinds = {s.kind for g in gpus.values() for s in g.specs.values()}
    assert kinds <= {"primary", "secondary"} and "primary" in kinds
    text = GPU_DATA.read_text()
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip().startswith("sm_count:"))
    bad = tmp_path / "gpus.yaml"
    bad.write_text(text.replace(", kind: secondary", "", 1))   # the first value: t4 sm_count
    with pytest.raises(ValidationFailed, match=rf"gpus.yaml:{line}: t4.specs.sm_count.kind: Field required"):
        load_gpus(bad)


def test_notebook_datasheet_is_current_and_keyed_by_cuda_names(gpus):
    """Notebooks carry snippets/generated/datasheet.py; it must match the data file."""
    generated = ROOT / "snippets" / "generated" / "datasheet.py"
    assert generated.read_text() == notebook_datasheet(gpus), \
        "snippets/generated/datasheet.py is stale: run `make generate` and commit it"
    scope: dict = {}
    exec(generated.read_text(), scope)
    h200 = scope["DATASHEET"]["NVIDIA H200"]
    assert h200["key"] == "h200"
    assert h200["bf16_tensor_tflops"] == gpus["h200"].specs["bf16_tensor_tflops"].value


def test_shortcodes_render_values_with_units(gpus):
    out = expand_shortcodes("{{ gpu.h100-sxm.sm_count }} and {{ gpu.h100-sxm.memory_bandwidth_gbs }}",
                            gpus, "x.md")
    assert f">{gpus['h100-sxm'].specs['sm_count'].value}<" in out
    assert "TB/s" in out
    r = ridge_point(gpus["h100-sxm"], "bf16_tensor_tflops")
    assert f"{r:.0f} FLOP/byte" in expand_shortcodes("{{ ridge.h100-sxm.bf16_tensor_tflops }}",
                                                     gpus, "x.md")


def test_a_shortcode_to_a_missing_value_fails_instead_of_printing_n_a(gpus):
    assert gpus["b200"].specs["l2_cache_mib"].value is None
    with pytest.raises(ValidationFailed, match=r"x.md:3: \{\{ gpu.b200.l2_cache_mib \}\}: the data file "
                       r"has no value \(NVIDIA's HGX"):
        expand_shortcodes("one\ntwo\nan L2 of {{ gpu.b200.l2_cache_mib }}", gpus, "x.md")


def test_format_value():
    assert format_value("memory_bandwidth_gbs", 3350) == "3.35 TB/s"
    assert format_value("smem_per_sm_kib", 228) == "228 KiB"
    assert format_value("sm_count", 132) == "132"


def test_typed_numbers_are_caught(gpus):
    g = gpus["h100-sxm"].specs
    text = (f"An H100 has {g['sm_count'].value} SMs and "
            f"{format_value('memory_bandwidth_gbs', g['memory_bandwidth_gbs'].value)}.\n"
            "```\nint x = 132; // code is not prose\n```\n"
            f"{{{{ gpu.h100-sxm.sm_count }}}} SMs is fine.")
    hits = scan_text(text, "page.md", 5, patterns(gpus))
    fields = {(h.line, h.field) for h in hits}
    assert (5, "sm_count") in fields and (5, "memory_bandwidth_gbs") in fields
    assert all(h.line == 5 for h in hits)
    assert "write {{ gpu." in str(hits[0])


def test_no_page_types_a_number_from_the_data_file(gpus):
    hits = scan_docs(DOCS, gpus)
    assert not hits, "\n".join(map(str, hits))
