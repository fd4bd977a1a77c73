"""``fr sweep grid`` (issue 18): the grid is the product of its axes, it is scored in batched
kernel calls over stacked parameter sets, and each setting's results equal a full FR-Bank run
(``fr bench run --param …``) with that setting — on a tiny generated suite, hash embedder."""

from __future__ import annotations

import csv
import json

import pytest

import frcore as fr
from experiments.candidate_table import build_table, rankings, scores
from experiments.grid import evaluate_grid, grid_settings, parse_grid, rescorable, run_grid
from frcore.bench import SYSTEMS, run_benchmark


@pytest.fixture(scope="module")
def table(gen_suites, hash_embedder):
    return build_table(gen_suites, hash_embedder, source="test", progress=False)


AXES = ["alpha.*=0.05,0.6,1", "rate.*=0.0005,0.05"]


def test_grid_is_the_product_of_its_axes_in_order():
    axes = parse_grid(
        ["alpha.OBLIGATIONS=0.1,0.2,0.3", "rate.LOGISTICAL_CONTEXT=0.004,0.016", "clock.OTHER=1/0/0,0/0/1"]
    )
    labels, sets = grid_settings(axes)
    assert len(labels) == len(sets) == 3 * 2 * 2
    assert labels[0] == {"alpha.OBLIGATIONS": 0.1, "rate.LOGISTICAL_CONTEXT": 0.004, "clock.OTHER": [1.0, 0.0, 0.0]}
    assert labels[1]["clock.OTHER"] == [0.0, 0.0, 1.0] and labels[2]["rate.LOGISTICAL_CONTEXT"] == 0.016
    for lab, p in zip(labels, sets):  # each set is the defaults with exactly its setting
        changes = fr.param_changes(p)
        assert changes.get("alpha.OBLIGATIONS", 0.35) == pytest.approx(lab["alpha.OBLIGATIONS"])
        assert changes.get("rate.LOGISTICAL_CONTEXT", 0.008) == pytest.approx(lab["rate.LOGISTICAL_CONTEXT"])
        assert set(changes) <= {"alpha.OBLIGATIONS", "rate.LOGISTICAL_CONTEXT", "clock.OTHER"}


def test_grid_errors_name_the_parameter():
    with pytest.raises(fr.ParamsError, match="alpha.OBLIGATIONS: given twice"):
        parse_grid(["alpha.OBLIGATIONS=0.1", "alpha.OBLIGATIONS=0.2"])
    with pytest.raises(fr.ParamsError, match="alpha.OBLIGATIONS: must lie in"):
        grid_settings(parse_grid(["alpha.OBLIGATIONS=0.1,1.5"]))
    with pytest.raises(fr.ParamsError, match="no grid"):
        parse_grid([])


def test_only_pipelines_with_fr_fulls_candidates_are_rescorable():
    for name in (
        "fr-full",
        "fr-global-alpha",
        "fr-no-floors",
        "fr-uniform-decay",
        "fr-cognitive",
        "fr-arithmetic-blend",
    ):
        assert rescorable(SYSTEMS[name]) is SYSTEMS[name]
    for name in ("flat-cosine", "fr-no-routing", "fr-lifecycle-off", "fr-no-linking", "fr-untyped", "fr-sigma-max"):
        with pytest.raises(ValueError, match=f"--system: {name}"):
            rescorable(SYSTEMS[name])


@pytest.mark.parametrize("system, specs", [("fr-full", AXES), ("fr-global-alpha", ["global_alpha=0,0.3,0.9"])])
def test_grid_equals_per_setting_full_pipeline_runs(gen_suites, hash_embedder, table, system, specs):
    """Every setting's per-question pass, and its top-10, equal a full FR-Bank run with that
    setting (``fr bench run --systems SYSTEM --param …``): the fixed-candidate rescoring is exact."""
    suites, emb = gen_suites, hash_embedder
    axes = parse_grid(specs)
    res = run_grid(suites, emb, axes, system=system, table=table, progress=False, chunk=4)
    labels, sets = grid_settings(axes, None, SYSTEMS[system])
    assert [g["params"] for g in res["grid"]] == labels
    ranked = rankings(scores(table, fr.stack_params(sets), SYSTEMS[system].pipeline.score), table)
    pass_rates = set()
    for i, lab in enumerate(labels):
        base = fr.apply_param_overrides(None, [f"{k}={v}" for k, v in lab.items()])
        ref = run_benchmark(suites, [system], emb, base_params=base, keep_terms=False, progress=False)
        assert [q["passed"] for q in ref["questions"]] == res["passed"][i], lab
        assert [q["ranked"] for q in ref["questions"]] == [list(r) for r in ranked[i]], lab
        assert res["grid"][i]["pass"] == pytest.approx(ref["systems"][system]["overall"]["pass"])
        assert res["grid"][i]["staleness"] == pytest.approx(ref["systems"][system]["overall"]["staleness"])
        for av, t in ref["systems"][system]["per_av"].items():
            assert res["grid"][i]["per_av"][av] == pytest.approx(t["pass"])
        pass_rates.add(res["grid"][i]["pass"])
    assert len(pass_rates) > 1, "the grid should move the pass rate (else the test proves little)"


def test_reference_is_the_default_ranking(gen_suites, hash_embedder, table):
    suites, emb = gen_suites, hash_embedder
    res = run_grid(suites, emb, parse_grid(["alpha.OBLIGATIONS=0.35,0.9"]), table=table, progress=False)
    ref = run_benchmark(suites, ["fr-full"], emb, keep_terms=False, progress=False)["systems"]["fr-full"]["overall"]
    assert res["reference"]["pass"] == pytest.approx(ref["pass"])
    assert res["reference"]["jaccard_at_10"] == 1.0 and res["reference"]["kendall_tau"] == 1.0
    same = res["grid"][0]  # 0.35 is the default α of OBLIGATIONS
    assert same["jaccard_at_10"] == 1.0 and same["kendall_tau"] == 1.0 and same["pass"] == res["reference"]["pass"]


def test_batching_chunks_and_dask_agree(table):
    from dask.distributed import Client, LocalCluster

    _, sets = grid_settings(parse_grid(AXES))
    one, _, calls_all = evaluate_grid(table, sets, chunk=64)
    per, _, calls_one = evaluate_grid(table, sets, chunk=1)
    assert (calls_all, calls_one) == (1, len(sets))
    assert one == per
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        dist, _, calls = evaluate_grid(table, sets, chunk=2, client=client)
    assert calls == 3 and dist == one


def test_cli_writes_json_csv_and_figures(tmp_path, capsys):
    from frcore.cli import main

    out = tmp_path / "g.json"
    argv = [
        "sweep",
        "grid",
        "--suite",
        "synthetic",
        "--personas",
        "1",
        "--embedder",
        "hash",
        "--param",
        "rate.LOGISTICAL_CONTEXT=0.004,0.008,0.016",
        "--param",
        "alpha.OBLIGATIONS=0.1,0.35",
        "--json",
        str(out),
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "re-scores each question's fixed candidate set" in printed and "1 batched kernel call" in printed
    res = json.loads(out.read_text())
    assert len(res["grid"]) == 6 and res["n_settings"] == 6
    for g in res["grid"]:
        assert set(g) == {"params", "pass", "staleness", "per_av", "jaccard_at_10", "kendall_tau"}
        assert set(g["params"]) == {"rate.LOGISTICAL_CONTEXT", "alpha.OBLIGATIONS"}
    with out.with_suffix(".csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 6 and float(rows[0]["pass"]) == pytest.approx(res["grid"][0]["pass"], abs=1e-6)
    assert out.with_suffix(".png").stat().st_size > 1000
    one = tmp_path / "one.json"  # one parameter: curves
    assert (
        main(
            [
                "sweep",
                "grid",
                "--suite",
                "synthetic",
                "--personas",
                "1",
                "--embedder",
                "hash",
                "--param",
                "floor.*=0,0.5,0.95",
                "--set",
                "global_alpha=0.2",
                "--json",
                str(one),
                "--fig",
                str(tmp_path / "curves.png"),
            ]
        )
        == 0
    )
    assert (tmp_path / "curves.png").stat().st_size > 1000
    assert json.loads(one.read_text())["base_params"]["changes_from_default"] == {"global_alpha": 0.2}


def test_plain_sweep_still_runs_the_appendix_sweeps(tmp_path, capsys):
    from frcore.cli import main

    assert (
        main(
            [
                "sweep",
                "--suite",
                "synthetic",
                "--personas",
                "1",
                "--embedder",
                "hash",
                "--only",
                "granularity",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    res = json.loads((tmp_path / "sweep_granularity.json").read_text())
    assert [r["k"] for r in res["rows"]] == list(range(1, 12)) and "params" not in res
    assert (
        main(
            [
                "sweep",
                "--suite",
                "synthetic",
                "--personas",
                "1",
                "--embedder",
                "hash",
                "--only",
                "nope",
                "--out",
                str(tmp_path),
            ]
        )
        == 2
    )
    assert "unknown sweep(s) ['nope']" in capsys.readouterr().err
