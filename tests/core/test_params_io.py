"""The parameter file ``frcore-params-v1`` and ``--param NAME=VALUE`` overrides (issue 18).

Round trips are exact; every malformed file or override raises a one-line error naming the
field (and the file); every scoring command reads ``--params FILE`` and rejects a bad one before
doing any work; the overrides reach the score."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.paths import ROOT

import frcore as fr
from frcore import CATEGORY_NAMES, ParamsError

OBL = CATEGORY_NAMES.index("OBLIGATIONS")
LOG = CATEGORY_NAMES.index("LOGISTICAL_CONTEXT")


def _equal(p, q) -> bool:
    return all(
        np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(np.asarray(a), np.asarray(b))
        for a, b in zip(p, q)
    )


def _doc(**changes):
    doc = fr.params_to_dict(fr.default_params())
    doc["params"].update(changes)
    return doc


# --------------------------------------------------------------------------- round trips


def test_default_round_trip_is_exact_and_readable(tmp_path):
    path = fr.save_params(fr.default_params(), tmp_path / "p.json", {"margin": -0.5}, {"command": "test"})
    text = path.read_text()
    assert '"rates": [0.0015, 0.0015, 0.002,' in text  # shortest decimals, one leaf per line
    back = fr.read_params_file(path)
    assert _equal(back.params, fr.default_params())
    assert back.certificate == {"margin": -0.5} and back.provenance == {"command": "test"}
    assert fr.param_changes(back.params) == {}


def test_changed_params_round_trip_exactly(tmp_path):
    rng = np.random.default_rng(0)
    p = fr.replace_params(
        fr.default_params(),
        alpha=rng.uniform(0, 1, 11),
        rates=rng.uniform(1e-4, 1e-1, 11),
        clocks=rng.dirichlet(np.ones(3), 11),
        global_alpha=0.123456789,
    )
    back = fr.load_params(fr.save_params(p, tmp_path / "p.json"))
    assert _equal(back, p)
    assert not _equal(back, fr.default_params())


def test_float64_round_trip(tmp_path):
    import jax
    import jax.numpy as jnp

    if not jax.config.read("jax_enable_x64"):
        pytest.skip("x64 disabled: float64 leaves are stored as float32 (tests/x64 runs with it)")
    p = fr.default_params(jnp.float64)
    back = fr.load_params(fr.save_params(p, tmp_path / "p.json"), dtype=jnp.float64)
    assert _equal(back, p)


def test_old_names_are_the_core_functions():
    from theory import calibrate

    assert calibrate.save_params is fr.save_params and calibrate.load_params is fr.load_params
    assert calibrate.PARAMS_FORMAT == fr.PARAMS_FORMAT == "frcore-params-v1"


def test_formats_md_example_loads():
    """The minimal example of docs/formats.md is the default parameter set."""

    text = (ROOT / "docs" / "formats.md").read_text()
    block = text.split("## Parameter file")[1].split("```json")[1].split("```")[0]
    assert _equal(fr.params_from_dict(json.loads(block), "formats.md"), fr.default_params())


# --------------------------------------------------------------------------- file errors


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d.update(format="v2"), "format"),
        (lambda d: d.update(extra=1), "extra"),
        (lambda d: d.update(params=[1]), "params"),
        (lambda d: d.update(certificate=[1]), "certificate"),
        (lambda d: d["params"].pop("routing_boost"), "params.routing_boost"),
        (lambda d: d["params"].update(speed=1.0), "params.speed"),
        (lambda d: d["params"].update(alpha=[0.1] * 10), "params.alpha"),
        (lambda d: d["params"].update(clocks=[[0.5, 0.5]] * 11), "params.clocks"),
        (lambda d: d["params"].update(global_alpha=[0.1]), "params.global_alpha"),
        (lambda d: d["params"].update(global_alpha=True), "params.global_alpha"),
        (lambda d: d["params"].update(global_alpha="0.1"), "params.global_alpha"),
        (lambda d: d["params"].update(global_alpha=None), "params.global_alpha"),
        (lambda d: d["params"]["rates"].__setitem__(3, "x"), "params.rates.HEALTH_WELLBEING"),
        (lambda d: d["params"].update(clocks=[[0.4, 0.3, 0.3]] * 10 + [[0.5, 0.5]]), "params.clocks"),
        (lambda d: d["params"]["alpha"].__setitem__(OBL, 1.5), "params.alpha.OBLIGATIONS"),
        (lambda d: d["params"]["rates"].__setitem__(LOG, 0.0), "params.rates.LOGISTICAL_CONTEXT"),
        (lambda d: d["params"]["floors"].__setitem__(0, -0.1), "params.floors.IDENTITY_SELF_CONCEPT"),
        (lambda d: d["params"]["clocks"].__setitem__(OBL, [0.8, 0.3, -0.1]), "params.clocks.OBLIGATIONS.conv"),
        (lambda d: d["params"]["clocks"].__setitem__(OBL, [0.8, 0.3, 0.1]), "params.clocks.OBLIGATIONS"),
        (lambda d: d["params"].update(antic_window=-1.0), "params.antic_window"),
        (lambda d: d["params"].update(numeric_exempt_weight=2.0), "params.numeric_exempt_weight"),
        (lambda d: d["params"].update(antic_peak=float("nan")), "params.antic_peak"),
    ],
)
def test_every_file_error_names_the_file_and_field(tmp_path, mutate, field):
    doc = _doc()
    mutate(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ParamsError) as e:
        fr.load_params(path)
    msg = str(e.value)
    assert e.value.field == field and e.value.source == str(path)
    assert msg.startswith(f"{path}: {field}: ") and "\n" not in msg


def test_unreadable_files_name_the_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": ')
    with pytest.raises(ParamsError, match=r"bad\.json: json: not JSON"):
        fr.load_params(bad)
    with pytest.raises(ParamsError, match=r"nope\.json: path: no such file"):
        fr.load_params(tmp_path / "nope.json")
    bad.write_text("[1]")
    with pytest.raises(ParamsError, match=r"bad\.json: format: expected a JSON object"):
        fr.load_params(bad)


# --------------------------------------------------------------------------- overrides


@pytest.mark.parametrize(
    "text, changes",
    [
        ("rate.LOGISTICAL_CONTEXT=0.016", {"rate.LOGISTICAL_CONTEXT": 0.016}),
        ("rates.logistical_context=0.016", {"rate.LOGISTICAL_CONTEXT": 0.016}),
        ("alpha.OBLIGATIONS=0.1", {"alpha.OBLIGATIONS": 0.1}),
        ("cognitive_rate.OTHER=0.01", {"cognitive_rate.OTHER": 0.01}),
        ("global_alpha=0.2", {"global_alpha": 0.2}),
        ("numeric_exempt_weight=1", {"numeric_exempt_weight": 1.0}),
        ("clock.OBLIGATIONS=0.6/0.2/0.2", {"clock.OBLIGATIONS": [0.6, 0.2, 0.2]}),
    ],
)
def test_each_override_sets_exactly_its_value(text, changes):
    assert fr.param_changes(fr.apply_param_overrides(None, [text])) == changes


def test_star_sets_every_category():
    p = fr.apply_param_overrides(None, ["floor.*=0"])
    assert np.all(np.asarray(p.floors) == 0)
    assert _equal(p._replace(floors=fr.default_params().floors), fr.default_params())
    q = fr.apply_param_overrides(None, ["alpha.*=0.5"])
    assert np.allclose(np.asarray(q.alpha), 0.5)


def test_one_clock_sensitivity_rescales_the_rest_of_its_row():
    p = fr.apply_param_overrides(None, ["clock.abs.OBLIGATIONS=0.5"])
    row = np.asarray(p.clocks, dtype=np.float64)[OBL]
    assert row[0] == pytest.approx(0.5) and row.sum() == pytest.approx(1.0, abs=1e-6)
    assert row[1] / row[2] == pytest.approx(0.1 / 0.2, rel=1e-5)  # the default row is 0.7 / 0.1 / 0.2
    assert list(fr.param_changes(p)) == ["clock.OBLIGATIONS"]
    q = fr.apply_param_overrides(None, ["clock.conv.*=1"])
    assert np.allclose(np.asarray(q.clocks), [[0, 0, 1]] * 11)
    r = fr.apply_param_overrides(q, ["clock.abs.OTHER=0.4"])
    assert np.allclose(np.asarray(r.clocks, dtype=np.float64)[-1], [0.4, 0.0, 0.6])
    s = fr.apply_param_overrides(
        None, ["clock.OTHER=1/0/0", "clock.abs.OTHER=0.4"]
    )  # the rest of the row is 0: split equally
    assert np.allclose(np.asarray(s.clocks, dtype=np.float64)[-1], [0.4, 0.3, 0.3])


def test_overrides_apply_in_order_on_top_of_a_file(tmp_path):
    path = fr.save_params(
        fr.apply_param_overrides(None, ["alpha.OBLIGATIONS=0.2", "global_alpha=0.3"]), tmp_path / "p.json"
    )
    p = fr.resolve_params(path, ["alpha.*=0.5", "alpha.OBLIGATIONS=0.1"])
    assert float(p.alpha[OBL]) == pytest.approx(0.1) and float(p.alpha[0]) == pytest.approx(0.5)
    assert float(p.global_alpha) == pytest.approx(0.3)  # from the file
    assert fr.resolve_params(None, ()) is None  # nothing given: callers keep the defaults untouched
    assert _equal(fr.resolve_params(path, ()), fr.load_params(path))


@pytest.mark.parametrize(
    "text, field, words",
    [
        ("rate.LOGISTICAL=0.1", "rate.LOGISTICAL", "unknown category 'LOGISTICAL'"),
        ("speed=1", "speed", "unknown parameter"),
        ("decay.OBLIGATIONS=1", "decay.OBLIGATIONS", "unknown parameter group 'decay'"),
        ("alpha=0.1", "alpha", "one value per category"),
        ("clock=0.1", "clock", "one value per category"),
        ("global_alpha.OTHER=0.1", "global_alpha.OTHER", "is a scalar"),
        ("alpha.OBLIGATIONS.x=0.1", "alpha.OBLIGATIONS.x", "expected alpha.CATEGORY"),
        ("clock.fast.OBLIGATIONS=0.1", "clock.fast.OBLIGATIONS", "unknown clock 'fast'"),
        ("clock.OBLIGATIONS=0.5/0.5", "clock.OBLIGATIONS", "three numbers"),
        ("clock.OBLIGATIONS=0.5/0.5/0.5", "clock.OBLIGATIONS", "must sum to 1"),
        ("clock.abs.OBLIGATIONS=1.5", "clock.abs.OBLIGATIONS", "[0, 1]"),
        ("global_alpha=abc", "global_alpha", "not a number"),
        ("global_alpha=nan", "global_alpha", "not finite"),
        ("alpha.OBLIGATIONS=1.5", "alpha.OBLIGATIONS", "must lie in [0, 1], got 1.5"),
        ("rate.*=0", "rate.*", "must be > 0"),
        ("floor.OTHER=-1", "floor.OTHER", "must lie in [0, 1]"),
        ("antic_window=-5", "antic_window", "must be > 0"),
        ("alpha.OBLIGATIONS", "alpha.OBLIGATIONS", "expected NAME=VALUE"),
        ("=0.1", "=0.1", "expected NAME=VALUE"),
    ],
)
def test_every_override_error_names_the_field(text, field, words):
    with pytest.raises(ParamsError) as e:
        fr.apply_param_overrides(None, [text])
    assert e.value.field == field and words in str(e.value)
    assert str(e.value).startswith(f"--param: {field}: ") and "\n" not in str(e.value)


def test_grid_values_are_parsed_and_checked():
    name, ovs = fr.parse_param_grid("clock.OBLIGATIONS=0.6/0.2/0.2,0.4/0.3/0.3")
    assert name == "clock.OBLIGATIONS" and [o.value for o in ovs] == [(0.6, 0.2, 0.2), (0.4, 0.3, 0.3)]
    for bad, words in (
        ("alpha.OBLIGATIONS=0.1,,0.2", "empty value"),
        ("alpha.OBLIGATIONS=0.1,0.1", "repeated"),
        ("alpha.OBLIGATIONS=0.1,x", "not a number"),
        ("alpha.NOPE=0.1,0.2", "unknown category"),
    ):
        with pytest.raises(ParamsError, match=words):
            fr.parse_param_grid(bad)


def test_overrides_reach_the_score():
    """An override changes the kernel's output exactly where it should."""
    q = fr.make_query("current")
    c = fr.make_candidates([0.5, 0.5], [{"OBLIGATIONS": 1.0}, {"IDENTITY_SELF_CONCEPT": 1.0}], [[100, 100, 10]] * 2)
    base = np.asarray(fr.score_candidates(fr.default_params(), q, c).total)
    new = np.asarray(fr.score_candidates(fr.apply_param_overrides(None, ["alpha.OBLIGATIONS=0.9"]), q, c).total)
    assert new[0] != base[0] and new[1] == base[1]


# --------------------------------------------------------------------------- the commands


def _run_cli(argv, capsys):
    from frcore.cli import main

    rc = main(argv)
    return rc, capsys.readouterr()


@pytest.fixture()
def bad_file(tmp_path):
    doc = _doc()
    doc["params"]["alpha"][OBL] = 1.5
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "run", "--suite", "synthetic", "--embedder", "hash"],
        ["bench", "locomo", "--data", "/nonexistent/locomo.json", "--embedder", "hash", "--json", "/tmp/never.json"],
        ["sweep", "--suite", "synthetic", "--embedder", "hash", "--out", "/tmp/never"],
        [
            "sweep",
            "grid",
            "--suite",
            "synthetic",
            "--embedder",
            "hash",
            "--param",
            "global_alpha=0.1,0.2",
            "--json",
            "/tmp/never.json",
        ],
        ["theory", "--suite", "synthetic", "--embedder", "hash"],
        ["calibrate", "--suite", "synthetic", "--embedder", "hash", "--out", "/tmp/never.json"],
        ["bank", "query", "/nonexistent/bank.db", "where do I live"],  # checked before the bank is opened
        ["bank", "explain", "/nonexistent/bank.db", "where do I live"],
    ],
)
def test_every_scoring_command_rejects_a_bad_params_file_in_one_line(argv, bad_file, capsys):
    rc, out = _run_cli(argv + ["--params", bad_file], capsys)
    lines = out.err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, out.err
    assert f"{bad_file}: params.alpha.OBLIGATIONS: must lie in [0, 1], got 1.5" in lines[0]


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "run", "--suite", "synthetic", "--embedder", "hash", "--param", "alpha.NOPE=0.1"],
        [
            "sweep",
            "grid",
            "--suite",
            "synthetic",
            "--embedder",
            "hash",
            "--param",
            "alpha.NOPE=0.1,0.2",
            "--json",
            "/tmp/never.json",
        ],
        ["theory", "--suite", "synthetic", "--embedder", "hash", "--param", "alpha.NOPE=0.1"],
        [
            "compare",
            "--suite",
            "synthetic",
            "--embedder",
            "hash",
            "--a",
            "default",
            "--b",
            "default",
            "--b-param",
            "alpha.NOPE=0.1",
        ],
        ["bank", "query", "/nonexistent/bank.db", "where do I live", "--param", "alpha.NOPE=0.1"],
    ],
)
def test_every_scoring_command_rejects_a_bad_override_in_one_line(argv, capsys):
    rc, out = _run_cli(argv, capsys)
    lines = out.err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, out.err
    assert "alpha.NOPE: unknown category 'NOPE'" in lines[0]


def test_bench_run_reads_params_and_overrides(tmp_path, capsys):
    """Same parameters by file → identical records; a changed file and its override form → the
    same (changed) records, recorded in the result."""
    common = [
        "bench",
        "run",
        "--suite",
        "synthetic",
        "--personas",
        "1",
        "--seed",
        "2",
        "--embedder",
        "hash",
        "--systems",
        "fr-full",
        "--no-terms",
    ]
    default_file = fr.save_params(fr.default_params(), tmp_path / "default.json")
    changed = fr.save_params(fr.apply_param_overrides(None, ["alpha.*=1", "floor.*=0"]), tmp_path / "changed.json")
    results = {}
    for name, extra in (
        ("none", []),
        ("default", ["--params", str(default_file)]),
        ("file", ["--params", str(changed)]),
        ("flags", ["--param", "alpha.*=1", "--param", "floor.*=0"]),
    ):
        path = tmp_path / f"{name}.json"
        rc, _ = _run_cli(common + extra + ["--json", str(path)], capsys)
        assert rc == 0
        results[name] = json.loads(path.read_text())
    ranked = {k: [q["ranked"] for q in r["questions"]] for k, r in results.items()}
    assert ranked["none"] == ranked["default"]
    assert ranked["file"] == ranked["flags"] != ranked["none"]
    assert results["none"]["param_overrides"] == {} and "params_file" not in results["none"]
    assert results["file"]["params_file"] == str(changed)
    assert results["flags"]["param_overrides"]["alpha.OBLIGATIONS"] == 1.0
    assert results["flags"]["param_overrides"] == results["file"]["param_overrides"]


def test_theory_and_calibrate_score_under_the_given_params():
    from frcore.bank import get_embedder
    from frcore.bench import generate_suites, parse_suite
    from theory.calibrate import calibrate
    from theory.diagnose import Context

    suites = [parse_suite(obj, "gen") for obj in generate_suites(1, seed=1)]
    fast = fr.apply_param_overrides(None, ["rate.*=0.5"])
    emb = get_embedder("hash")
    default_ctx, ctx = Context(suites, emb), Context(suites, emb, params=fast)
    assert default_ctx.corpus.params is None and ctx.corpus.params is fast
    a0, a1 = default_ctx.corpus.activation(), ctx.corpus.activation()
    valid = default_ctx.corpus.valid
    assert (a1[valid] <= a0[valid] + 1e-7).all() and (a1[valid] < a0[valid]).any()  # faster decay: lower activation
    p, cert = calibrate(ctx.corpus)
    assert np.array_equal(np.asarray(p.rates), np.asarray(fast.rates))  # rates held fixed at the base's
    p0, _ = calibrate(default_ctx.corpus, base=fast)
    assert np.array_equal(np.asarray(p0.alpha), np.asarray(p.alpha))  # base= is the same as a corpus scored under it


def test_bank_query_reads_params_and_overrides(tmp_path, capsys):
    """`fr bank query` scores under --params FILE / --param NAME=VALUE: the default file gives the
    default scores, a changed file and its override form give the same changed scores."""
    from frcore.bank import Bank

    db = tmp_path / "bank.db"
    with Bank.open(str(db), embedder="hash") as bank:
        bank.add(
            [
                {
                    "id": "old",
                    "text": "Lives in Porto near the river",
                    "categories": {"LOGISTICAL_CONTEXT": 1.0},
                    "said_at": "2024-01-01",
                    "slot": "city",
                },
                {
                    "id": "new",
                    "text": "Moved to Lisbon for a new job",
                    "categories": {"LOGISTICAL_CONTEXT": 1.0},
                    "said_at": "2025-01-01",
                    "slot": "city",
                },
                {
                    "id": "dr",
                    "text": "Dentist appointment every spring",
                    "categories": {"OBLIGATIONS": 1.0},
                    "said_at": "2023-05-01",
                },
            ]
        )
    default_file = fr.save_params(fr.default_params(), tmp_path / "default.json")
    changed = fr.save_params(fr.apply_param_overrides(None, ["alpha.*=1", "floor.*=0"]), tmp_path / "changed.json")
    scores = {}
    for name, extra in (
        ("none", []),
        ("default", ["--params", str(default_file)]),
        ("file", ["--params", str(changed)]),
        ("flags", ["--param", "alpha.*=1", "--param", "floor.*=0"]),
    ):
        rc, out = _run_cli(
            ["bank", "query", str(db), "where does the user live", "--at", "2025-06-01", "--json", *extra], capsys
        )
        assert rc == 0, out.err
        scores[name] = {r["id"]: r["score"] for r in json.loads(out.out)["results"]}
    assert scores["none"] == scores["default"]
    assert scores["file"] == scores["flags"]
    assert scores["file"].keys() == scores["none"].keys() and scores["file"] != scores["none"]
