"""LifecycleBench runner, systems and the sweep machinery (hash embedder, small synthetic suites)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from frcore import default_params
from frcore.bank.search._embed import get_embedder
from frcore.bench._generator import generate_suites
from frcore.bench._runner import run_benchmark, run_persona
from frcore.bench._suite import parse_suite, suite_to_dict
from frcore.bench._systems import DEFAULT_SYSTEMS, SYSTEMS, collapse_params, resolve_systems


@pytest.fixture(scope="module")
def suites():
    return [parse_suite(obj, f"gen#{i}") for i, obj in enumerate(generate_suites(2, seed=3))]


@pytest.fixture(scope="module")
def emb():
    return get_embedder("hash")


def test_result_follows_output_contract(suites, emb):
    res = run_benchmark(
        suites,
        "fr-full,flat-cosine,bm25,uniform-decay,overwrite",
        emb,
        progress=False,
        keep_terms=True,
        suite_label="t",
    )
    json.dumps(res, default=str)
    assert res["suite"] == "t"
    for name in ("fr-full", "flat-cosine", "bm25", "uniform-decay", "overwrite"):
        o = res["systems"][name]["overall"]
        assert {"pass", "staleness", "hit@1", "hit@5", "hit@10", "mrr", "n"} <= set(o)
        assert o["n"] == sum(len(s.questions) for s in suites)
        for av, t in res["systems"][name]["per_av"].items():
            assert av.startswith("AV") and {"pass", "staleness", "n"} <= set(t)
    q = res["questions"][0]
    assert {"system", "id", "attack_vector", "passed", "ranked", "terms"} <= set(q)
    assert len(q["ranked"]) <= 10
    assert set(res["comparisons_vs_fr_full"]) == {"flat-cosine", "bm25", "uniform-decay", "overwrite"}


def test_roles_never_reach_the_system(suites, emb):
    """Scrambling the ground-truth ``role`` of every fact leaves every ranking identical."""
    suite = suites[0]
    d = suite_to_dict(suite)
    roles = [f["role"] for f in d["facts"]]
    rng = random.Random(0)
    rng.shuffle(roles)
    for f, r in zip(d["facts"], roles):
        f["role"] = r
    scrambled = parse_suite(d, "scrambled")
    assert [f.role for f in scrambled.facts] != [f.role for f in suite.facts]
    systems = resolve_systems("fr-full,overwrite,fr-untyped")
    a = run_persona(suite, systems, emb, keep_terms=False)
    b = run_persona(scrambled, systems, emb, keep_terms=False)
    assert [r["ranked"] for r in a] == [r["ranked"] for r in b]


def test_every_system_resolves_and_runs(suites, emb):
    systems = resolve_systems("all") + resolve_systems("fr-collapsed-3,fr-cognitive-partition")
    assert [s.name for s in systems[: len(DEFAULT_SYSTEMS)]] == list(DEFAULT_SYSTEMS)
    recs = run_persona(suites[1], systems, emb, keep_terms=False)
    assert len(recs) == len(systems) * len(suites[1].questions)
    with pytest.raises(ValueError, match="unknown system"):
        resolve_systems("fr-magic")


def test_gold_intent_is_used(suites, emb):
    recs = run_persona(suites[0], resolve_systems("fr-full"), emb, gold_intent=True, keep_terms=False)
    assert all(r["intent"] == r["gold_intent"] for r in recs)


def test_collapse_params_means_within_groups():
    p = default_params()
    groups = [["OBLIGATIONS", "LOGISTICAL_CONTEXT"]] + [
        [c]
        for c in (
            "IDENTITY_SELF_CONCEPT",
            "RELATIONAL_BONDS",
            "INTELLECTUAL_INTERESTS",
            "HEALTH_WELLBEING",
            "PROJECTS_ENDEAVORS",
            "HOBBIES_RECREATION",
            "PREFERENCES_HABITS",
            "FINANCIAL_MATERIAL",
            "OTHER",
        )
    ]
    q = collapse_params(p, groups)
    r = np.asarray(q.rates)
    assert np.isclose(r[8], (0.006 + 0.008) / 2) and np.isclose(r[9], r[8]) and np.isclose(r[0], 0.0015)
    with pytest.raises(ValueError, match="groups"):
        collapse_params(p, groups[:-1])


def test_sweeps_batched_and_distributed_equal_local(suites, emb):
    from dask.distributed import Client, LocalCluster

    from experiments.candidate_table import build_table
    from experiments.sweeps import LabelPerturbation, run_granularity, run_label_perturbation, run_multiplier

    table = build_table(suites[:1], emb, source="test", progress=False)
    mult = run_multiplier(table)
    one = mult["per_category"]["FINANCIAL_MATERIAL"]
    assert one["jaccard"][one["multipliers"].index(1.0)] == pytest.approx(1.0)
    g = run_granularity(table)
    assert [r["k"] for r in g["rows"]] == list(range(1, 12))
    cfg = LabelPerturbation(rates=(0.5,), seeds=(0, 1))
    local = run_label_perturbation(table, cfg)
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        dist = run_label_perturbation(table, cfg, client=client)
    assert local["rows"] == dist["rows"]


def test_collapsed_systems_use_the_optimal_table_partition():
    import theory.partitions
    from frcore import optimal_table_partitions

    assert theory.partitions.optimal_table_partitions is optimal_table_partitions  # one definition, re-exported

    for k in (1, 3, 7, 11):
        (system,) = resolve_systems(f"fr-collapsed-{k}")
        want = collapse_params(default_params(), optimal_table_partitions()[k])
        got = system.params()
        for a, b in zip(got, want):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert len(optimal_table_partitions()[3]) == 3


def test_pipeline_overrides_apply_to_fr_systems_only():
    from frcore.bench._systems import with_overrides

    out = with_overrides(resolve_systems("fr-full,flat-cosine"), {"hybrid_weight": 0.3, "n_distill": 10.0})
    assert (
        out[0].pipeline.hybrid_weight == 0.3
        and out[0].pipeline.n_distill == 10
        and isinstance(out[0].pipeline.n_distill, int)
    )
    assert out[1].pipeline == SYSTEMS["flat-cosine"].pipeline
    with pytest.raises(ValueError, match="pipeline"):
        with_overrides(out, {"nonsense": 1.0})
