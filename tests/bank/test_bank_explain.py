"""``Bank.explain`` and ``fr bank explain``: every result's additive score terms sum to its total,
on a bank holding exempt (numeric, superseded), lifecycle-linked and contested edges.

The additive terms are :data:`frcore._types.SCORE_SUMMANDS`, the one list every explanation
uses. Tolerances (both stated where they are used):

- returned values (``Bank.explain``, ``--json``): the kernel adds its float32 terms left to
  right, each add rounding by at most half an ulp, so |Σ summands − total| ≤ n · 2⁻²⁴ · Σ|summand|
  (n = number of summands), plus 1e-12 for exact zeros;
- printed values (6 decimals): each printed term and the total are off by at most 0.5e-6, so
  |Σ printed − printed total| ≤ (n + 1) · 0.5e-6 plus the float32 bound above.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

import frcore as fr
from frcore._params import NUMERIC_EXEMPT_WEIGHT
from frcore._scoring import ScoreTerms
from frcore._types import SCORE_SUMMANDS, score_summands
from frcore.bank import Bank, PipelineConfig

AT = "2025-07-01"


def fact(fid: str, text: str, category: str, said_at: str, **kw) -> dict:
    return {"id": fid, "text": text, "categories": {category: 1.0}, "said_at": said_at, **kw}


FACTS = [
    # numeric and superseded: a current query admits it only through the numeric exemption
    fact("sal1", "Earns a salary of $80,000 a year at the bank", "FINANCIAL_MATERIAL", "2025-01-05", slot="salary"),
    # its successor: worded unlike the question, it gets σ from its predecessor (linked)
    fact(
        "sal2",
        "Got a raise, now paid $95,000",
        "FINANCIAL_MATERIAL",
        "2025-05-01",
        slot="salary",
        links={"supersedes": "sal1"},
    ),
    fact("diet1", "Is vegetarian and has been for years", "PREFERENCES_HABITS", "2025-01-05", slot="diet"),
    fact(
        "diet2",
        "Started eating fish again, pescatarian now",
        "PREFERENCES_HABITS",
        "2025-06-01",
        slot="diet",
        links={"supersedes": "diet1"},
    ),
    # soft supersession (confidence < 0.7): both contested, the tentative one with log ω < 0
    fact("city1", "Lives in Porto near the river", "IDENTITY_SELF_CONCEPT", "2025-01-02", slot="city"),
    fact(
        "city2",
        "Might move to Lisbon soon",
        "IDENTITY_SELF_CONCEPT",
        "2025-04-02",
        slot="city",
        confidence=0.5,
        links={"contradicts": "city1"},
    ),
    fact(
        "trip",
        "Flying to Berlin for a conference on July 20",
        "LOGISTICAL_CONTEXT",
        "2025-06-10",
        event_time="2025-07-20",
    ),
    fact("sister", "Has a sister named Ines who lives in Porto", "RELATIONAL_BONDS", "2025-01-02"),
]
QUERIES = [
    ("what salary does the user earn at the bank", {}),
    ("is the user vegetarian", {}),
    ("where does the user live, Porto", {}),
    ("how much did the user earn before the raise", {}),
    ("any upcoming trips or conferences", {}),
    ("tell me about the user's family and money", {"k": 20}),
]


def float32_bound(values) -> float:
    """How far the kernel's float32 left-to-right sum of ``values`` may be from their exact sum."""
    return len(values) * 2.0**-24 * sum(abs(v) for v in values) + 1e-12


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    path = tmp_path_factory.mktemp("explain") / "bank.db"
    b = Bank.open(str(path), embedder="hash")
    b.add(FACTS)
    yield b
    b.close()


def test_summands_are_kernel_terms_that_add_up_to_the_kernel_total():
    """The summand list names fields of the kernel's ScoreTerms, and on kernel output where every
    summand is non-zero somewhere (routing, contested, exempt edges) they sum to ``total``."""
    assert set(SCORE_SUMMANDS) <= set(ScoreTerms._fields) and "total" not in SCORE_SUMMANDS
    assert len(set(SCORE_SUMMANDS)) == len(SCORE_SUMMANDS)
    rng = np.random.default_rng(0)
    k = 64
    c = len(fr.CATEGORY_NAMES)
    w = rng.dirichlet(np.ones(c) * 0.5, size=k)
    state = rng.integers(0, len(fr.State), size=k)
    cands = fr.make_candidates(
        rng.uniform(0, 1, k),
        w,
        rng.uniform(0, 5000, (k, 3)),
        state=state,
        confidence=rng.uniform(0.2, 1, k),
        numeric=rng.random(k) < 0.5,
        hours_to_event=np.where(rng.random(k) < 0.5, rng.uniform(-500, 500, k), np.nan),
    )
    seen = set()
    for intent in fr.INTENT_NAMES:
        terms = fr.score_candidates(fr.default_params(), fr.make_query(intent, rng.uniform(0, 1, c)), cands)
        parts = {name: np.asarray(v, dtype=np.float64) for name, v in score_summands(terms)}
        total = np.asarray(terms.total, dtype=np.float64)
        finite = np.isfinite(total)
        assert finite.any()
        for i in np.flatnonzero(finite):
            values = [parts[n][i] for n in SCORE_SUMMANDS]
            assert abs(sum(values) - total[i]) <= float32_bound(values), (intent, i, dict(zip(SCORE_SUMMANDS, values)))
            seen |= {n for n, v in zip(SCORE_SUMMANDS, values) if v != 0}
        # masked candidates: the −∞ is the mask summand's
        assert np.all(np.isneginf(parts["mask"][~finite]))
    assert seen == set(SCORE_SUMMANDS) - {"mask"}  # every summand but the (0 / −∞) mask was exercised non-zero


def _explained(bank):
    out = []
    for text, kw in QUERIES:
        res = bank.explain(text, at=AT, **kw)
        assert res.results, text
        out.append((text, kw, res))
    return out


def test_every_result_of_every_query_adds_up(bank):
    exempt = linked = contested = 0
    for text, kw, res in _explained(bank):
        plain = bank.query(text, at=AT, **kw)
        assert plain.ids == res.ids and [r["terms"] for r in plain.results] == [r["terms"] for r in res.results]
        for r in res.results:
            e, t = r["explanation"], r["terms"]
            assert list(e["summands"]) == list(SCORE_SUMMANDS)
            assert e["summands"] == {n: t[n] for n in SCORE_SUMMANDS}  # the kernel's values, unchanged
            values = list(e["summands"].values())
            assert abs(sum(values) - e["total"]) <= float32_bound(values), (text, r["id"], e)
            assert e["total"] == r["score"] == t["total"]
            s = e["sigma"]
            # σ as the kernel saw it is the hybrid of its sources (float32 rounding of the packed input)
            assert s["hybrid"] == pytest.approx((1 - s["hybrid_weight"]) * s["linked"] + s["hybrid_weight"] * s["bm25"])
            assert s["kernel"] == pytest.approx(s["hybrid"], rel=1e-6, abs=1e-7)
            assert s["linked"] >= s["cosine"]
            if t["exemption"] != 0:
                exempt += 1
                assert r["state"] in ("superseded", "expired") and t["exemption"] < 0
            if s["linked_from"] is not None:
                linked += 1
                assert s["linked"] > s["cosine"]
            if t["supersession"] != 0:
                contested += 1
                assert r["state"] == "contested"
    # the cases the sum would get wrong if a term were missing are actually among the results
    assert exempt >= 1 and linked >= 1 and contested >= 1, (exempt, linked, contested)


def test_linked_sigma_names_its_predecessor(bank):
    res = bank.explain("what salary does the user earn at the bank", at=AT)
    by_id = {r["id"]: r for r in res.results}
    new, old = by_id["sal2"]["explanation"], by_id["sal1"]
    assert new["sigma"]["linked_from"] == "sal1"
    assert new["sigma"]["linked"] == pytest.approx(old["explanation"]["sigma"]["cosine"])
    assert old["state"] == "superseded"
    assert old["terms"]["exemption"] == pytest.approx(math.log(NUMERIC_EXEMPT_WEIGHT), rel=1e-6)


def test_scaled_sigma_still_adds_up(bank):
    res = bank.explain("where does the user live, Porto", at=AT, config=PipelineConfig(sigma_scale="max"))
    top = max(r["explanation"]["sigma"]["hybrid"] for r in res.results)
    for r in res.results:
        e = r["explanation"]
        assert e["sigma"]["scale"] == "max"
        assert e["sigma"]["kernel"] == pytest.approx(e["sigma"]["hybrid"] / top, rel=1e-6)
        values = list(e["summands"].values())
        assert abs(sum(values) - e["total"]) <= float32_bound(values)


_NUM = r"([+-]?\d+\.\d+)"


def _cli(capsys, *argv) -> str:
    from frcore.cli import main

    capsys.readouterr()
    assert main(list(argv)) == 0
    return capsys.readouterr().out


@pytest.fixture()
def db(tmp_path):
    path = tmp_path / "cli.db"
    with Bank.open(str(path), embedder="hash") as b:
        b.add(FACTS)
    return str(path)


def test_cli_explain_prints_terms_that_add_up(db, capsys):
    summand_line = re.compile(rf"^\s+((?:\w+={_NUM} \+ )*\w+={_NUM}) = total={_NUM}$")
    exempt = linked = 0
    for text, kw in QUERIES:
        out = _cli(capsys, "bank", "explain", db, text, "--at", AT, "--k", str(kw.get("k", 10)))
        ranks = re.findall(rf"^\s*\d+\. {_NUM}  \[", out, re.MULTILINE)
        lines = [m for m in map(summand_line.match, out.splitlines()) if m]
        assert ranks and len(lines) == len(ranks), out  # one line of terms per printed result
        for m, rank_score in zip(lines, ranks):
            printed = {name: float(v) for name, v in re.findall(rf"(\w+)={_NUM}", m.group(1))}
            total = float(m.group(m.lastindex))
            # 6 decimals: each printed number is within 0.5e-6 of its value (see the module docstring)
            values = list(printed.values())
            assert abs(sum(values) - total) <= (len(values) + 1) * 0.5e-6 + float32_bound(values), m.group(0)
            assert abs(total - float(rank_score)) <= 0.5e-4 + 0.5e-6
            assert list(printed) == list(SCORE_SUMMANDS)
            exempt += printed.get("exemption", 0.0) != 0
        linked += out.count("(from ")
    assert exempt >= 1 and linked >= 1


def test_cli_query_json_lists_the_same_summands(db, capsys):
    out = json.loads(_cli(capsys, "bank", "query", db, QUERIES[0][0], "--at", AT, "--json"))
    assert out["results"]
    for r in out["results"]:
        e = r["explanation"]
        assert list(e["summands"]) == list(SCORE_SUMMANDS)
        values = list(e["summands"].values())
        assert abs(sum(values) - e["total"]) <= float32_bound(values)
        assert e["total"] == r["score"]
    assert any(r["explanation"]["summands"]["exemption"] < 0 for r in out["results"])
