"""Smoke tests of paper_figures: every script builds from small hand-written result files, a
missing or malformed input becomes a recorded failure naming the file and field, and tables
carry the numbers of the input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from support.figure_samples import SAMPLES, _metrics

from paper_figures import build, tab_ablation

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# SAMPLES, the result files every script builds from: tests/support/figure_samples.py
FIGURES = {
    "fig_latency.png",
    "fig_multiplier.png",
    "fig_alpha.png",
    "fig_noise.png",
    "fig_labels.png",
    "fig_granularity.png",
}
TABLES = {
    f"{s}.{e}"
    for s in ("tab_multiplier", "tab_ablation", "tab_ablation_per_av", "tab_theory", "tab_holdout")
    for e in ("md", "csv")
}


def _write(folder: Path, samples: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, obj in samples.items():
        (folder / name).write_text(json.dumps(obj))
    return folder


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("figs")
    res = build.build_all(_write(root / "results", SAMPLES), root / "out")
    return root / "out", res


def test_every_figure_and_table_is_built(built):
    out, res = built
    assert res["failures"] == []
    names = {Path(o["path"]).name for o in res["outputs"]}
    assert FIGURES <= names and TABLES <= names
    for o in res["outputs"]:
        p = Path(o["path"])
        assert p.is_file() and p.stat().st_size > 0
        assert o["kind"] == ("figure" if p.suffix == ".png" else "table")
        assert o["command"].startswith("python -m paper_figures.")
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == PNG_MAGIC
    assert [s["script"] for s in res["skipped"]] == ["tab_locomo"]


def test_tables_carry_input_numbers_and_paper_column(built):
    out, _ = built
    abl = (out / "tab_ablation.md").read_text()
    fr = next(line for line in abl.splitlines() if line.startswith("| fr-full "))
    fc = next(line for line in abl.splitlines() if line.startswith("| flat-cosine "))
    assert "87.5" in fr and "72.9" in fr and "reference" in fr
    assert "37.5" in fc and "+50.0 [+25.0, +75.0]" in fc and "0.0313" in fc and "60.7" in fc
    th = (out / "tab_theory.md").read_text()
    assert "2 of 2 checks pass; 1 of 2 claims reproduced" in th and "| pass | not reproduced | share differs |" in th
    assert "\\|" in th  # pipe inside a cell is escaped
    ho = (out / "tab_holdout.md").read_text()
    assert "56.2" in ho and "77.0" in ho and "76.8" in ho
    mu = (out / "tab_multiplier.md").read_text()
    assert "0.33x–4x" in mu and "1x–4x" in mu


def test_missing_input_is_a_recorded_failure(tmp_path):
    samples = {k: v for k, v in SAMPLES.items() if k != "sweep_alpha.json"}
    res = build.build_all(
        _write(tmp_path / "r", samples), tmp_path / "o", scripts=("fig_alpha", "fig_granularity", "tab_locomo")
    )
    assert [f["script"] for f in res["failures"]] == ["fig_alpha"]
    assert "sweep_alpha.json" in res["failures"][0]["error"]
    assert [Path(o["path"]).name for o in res["outputs"]] == ["fig_granularity.png"]


@pytest.mark.parametrize(
    "file, mutate, needle",
    [
        ("latency.json", lambda d: d["results"][2].pop("median_us"), "results[2]"),
        ("sweep_granularity.json", lambda d: d["rows"][4].__setitem__("pass", "n/a"), "rows[4].pass"),
        ("bench.json", lambda d: d["systems"]["flat-cosine"]["overall"].pop("mrr"), "systems.flat-cosine.overall.mrr"),
        ("theory.json", lambda d: d["claims"][1].__setitem__("verdict", "passed"), "claims[1]"),
        (
            "sweep_noise.json",
            lambda d: d["summary"]["category"]["0.3"].__setitem__("tau", [0.9]),
            "summary.category.0.3.tau",
        ),
    ],
    ids=[
        "latency-missing-median",
        "granularity-bad-pass",
        "bench-missing-mrr",
        "theory-bad-verdict",
        "noise-short-pair",
    ],
)
def test_malformed_input_names_file_and_field(tmp_path, file, mutate, needle):
    d = json.loads(json.dumps(SAMPLES[file]))
    mutate(d)
    script = {
        "latency.json": "fig_latency",
        "sweep_granularity.json": "fig_granularity",
        "bench.json": "tab_ablation",
        "theory.json": "tab_theory",
        "sweep_noise.json": "fig_noise",
    }[file]
    res = build.build_all(_write(tmp_path / "r", {**SAMPLES, file: d}), tmp_path / "o", scripts=(script,))
    (f,) = res["failures"]
    assert f["script"] == script and f["error"].startswith("ValueError") and file in f["error"] and needle in f["error"]


def test_reproduce_builds_figures_through_the_fr_command(tmp_path, built):
    """``fr reproduce`` runs ``fr figures`` as a command (experiments does not import
    paper_figures) and gets the same listing as :func:`paper_figures.build.build_all`."""
    from experiments.reproduce import build_figures

    _, direct = built
    samples = {k: v for k, v in SAMPLES.items() if k != "sweep_alpha.json"}
    res = build_figures(_write(tmp_path / "r", SAMPLES), tmp_path / "o")
    assert {Path(o["path"]).name for o in res["outputs"]} == {Path(o["path"]).name for o in direct["outputs"]}
    assert res["failures"] == [] and res["skipped"] == direct["skipped"]
    res = build_figures(_write(tmp_path / "r2", samples), tmp_path / "o2")
    assert [f["script"] for f in res["failures"]] == ["fig_alpha"]


def test_cli_entry_point(tmp_path, capsys):
    from paper_figures import tab_holdout
    from paper_figures._common import cli

    r = _write(tmp_path / "r", SAMPLES)
    assert cli(tab_holdout.make, "x", [str(r), str(tmp_path / "o")]) == 0
    assert (tmp_path / "o" / "tab_holdout.md").is_file()
    assert cli(tab_holdout.make, "x", [str(tmp_path / "nowhere"), str(tmp_path / "o")]) == 2
    assert "sweep_holdout.json" in capsys.readouterr().err


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True), st.floats(0, 1), min_size=1, max_size=6))
def test_ablation_table_one_row_per_system_with_its_pass(tmp_path_factory, passes):
    """Every system appears exactly once, with its pass rounded to 0.1 pp."""
    out = tmp_path_factory.mktemp("abl")
    d = {"systems": {n: {"overall": _metrics(p)} for n, p in passes.items()}}
    md, _ = tab_ablation.tables(d, "bench.json", out, "t")
    body = [line for line in md.read_text().splitlines() if line.startswith("| ") and not line.startswith("| system")]
    assert len(body) == len(passes)
    for line in body:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert abs(float(cells[1]) - 100 * passes[cells[0]]) <= 0.05 + 1e-9
