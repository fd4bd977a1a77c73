"""Rules that cannot drift: theory/rule_record.json holds, for every claim's current rule text, the
commit that wrote it (tools/rule_record.py reads it from git); a rule edited without the record
goes red here, the recorded commits are checked against git when the history is there, and every
earlier rule the record lists is kept executable and evaluated on the same witness."""

from __future__ import annotations

import copy
import importlib.util
import shutil
import subprocess

import pytest
from support.ledger import FLAT, _latency_curve, _rows, base_results
from support.paths import ROOT

from experiments import ledger
from theory import rule_record
from theory._base import CLAIMS
from theory.revisions import REVISIONS as THEORY_REVISIONS
from theory.run import load_claim_modules
from theory.verdict import Rule, statements

ROOT = ROOT
load_claim_modules()


def _current() -> dict[str, str]:
    out = {cid: c.rule.text for cid, c in CLAIMS.items()}
    out.update({r.id: r.rule.text for r in ledger.LEDGER if r.rule is not None})
    return out


def _tool():
    spec = importlib.util.spec_from_file_location("rule_record_tool", ROOT / "tools" / "rule_record.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _has_history(*commits: str) -> bool:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return False
    for c in commits:
        ok = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{c}^{{commit}}"], capture_output=True)
        if ok.returncode:
            return False
    return True


def test_every_rule_text_has_its_commit_in_the_record():
    """A rule edited without regenerating the record (tools/rule_record.py) fails here."""
    rec = rule_record.load()
    missing = {cid for cid, t in _current().items() if rec.get(cid, {}).get("sha256") != rule_record.text_hash(t)}
    assert not missing, f"run tools/rule_record.py after committing these rules: {sorted(missing)}"
    assert set(rec) == set(_current())  # no entry for a claim that is gone
    for cid, e in rec.items():
        assert len(e["commit"]) == 40 and e["date"][:2] == "20", cid


def test_ledger_row_ids_are_not_theory_claim_ids():
    """The record is keyed by claim id: a ledger row with its own rule must not share a theory claim's id."""
    assert not {r.id for r in ledger.LEDGER if r.rule is not None} & set(CLAIMS)


def test_every_earlier_rule_is_kept_executable():
    """Each earlier text of the record has an executable Rule of exactly that text, and no table entry
    is a text the record does not list."""
    tables = {**THEORY_REVISIONS, **ledger.REVISIONS}
    assert not set(THEORY_REVISIONS) & set(ledger.REVISIONS)
    for cid, e in rule_record.load().items():
        listed = sorted(x["text"] for x in e["earlier"])
        kept = sorted(r.text for r in tables.get(cid, ()))
        assert listed == kept, cid
        assert all(isinstance(r, Rule) for r in tables.get(cid, ()))


def test_the_latency_and_static_revisions_are_recorded():
    """Known by reading the history: the latency rule was loosened in 4b99ac9 (R² of a line → log–log
    slope) and restored beside the slope later; 'zero cost' became non-inferiority in 4b99ac9."""
    rec = rule_record.load()
    lat = rec["latency"]
    assert [e["commit"][:7] for e in lat["earlier"]] == ["4b99ac9", "3943dde"]
    assert "R² ≥ 0.9" in lat["earlier"][1]["text"] and "log–log slope ≤ 1.1" in lat["earlier"][0]["text"]
    assert "R² ≥ 0.9" not in lat["earlier"][0]["text"]
    assert lat["first_rule_commit"][:7] == "3943dde"
    assert [e["commit"][:7] for e in rec["static_zero_cost"]["earlier"]] == ["3943dde"]
    assert rec["multiplier"]["earlier"] == [] and rec["multiplier"]["commit"][:7] == "3943dde"


@pytest.mark.skipif(not _has_history("3943dde"), reason="needs git and the repository's history (not a shallow clone)")
def test_recorded_commits_introduce_the_texts():
    """The recorded commit has the text and none of its parents has it; each earlier text is in the
    commit recorded for it (read from git with the tool's source reader)."""
    tool = _tool()
    rec = rule_record.load()
    trees: dict[str, dict[str, str]] = {}

    def texts(c):
        if c not in trees:
            trees[c] = tool.Tree(c).rule_texts()
        return trees[c]

    def parents(c):
        out = subprocess.run(["git", "-C", str(ROOT), "rev-list", "--parents", "-n", "1", c], capture_output=True)
        return out.stdout.decode().split()[1:]

    for cid, text in _current().items():
        c = rec[cid]["commit"]
        assert texts(c).get(cid) == text, cid
        assert all(texts(p).get(cid) != text for p in parents(c)), cid
        for e in rec[cid]["earlier"]:
            assert texts(e["commit"]).get(cid) == e["text"], (cid, e["commit"])
            assert all(texts(p).get(cid) != e["text"] for p in parents(e["commit"])), (cid, e["commit"])


def test_the_source_reader_joins_literals_and_resolves_names():
    tool = _tool()
    src = """
EPS = 0.01
SHARED = statements("shared " "rule", ("a",))

@claim("c1", "t", "p", kind=FORMAL, rule=Rule("one " f"eps {EPS}", parts))
def f(): ...

@claim("c2", "t", "p", kind=FORMAL, rule=SHARED)
def g(): ...

LEDGER = (Row("r1", "p", "w", EMPIRICAL, Rule("row " "rule", parts)), Row("r2", "p", "w", EMPIRICAL, claim="c1"))
"""
    bound, defs = tool.parse_source(src)
    assert bound == {"SHARED": "shared rule"}
    assert {cid: t for cid, t, _ in defs} == {"c1": "one eps 0.01", "c2": "shared rule", "r1": "row rule"}


# --------------------------------------------------------------------------- provenance


def test_provenance_of_an_unrecorded_text():
    p = rule_record.provenance("latency", Rule("a rule nobody recorded", parts=lambda w: []), (), {})
    assert p["rule_commit"] is None and p["rule_unrecorded"] and p["revisions"] == []


def test_provenance_evaluates_each_earlier_rule_on_the_witness():
    cur = CLAIMS["thm3p"].rule
    old = THEORY_REVISIONS["thm3p"][0]
    w = {"statement": {"age-only scorers err on ≥ 1/2": True, "event time lets frcore distinguish them": False}}
    p = rule_record.provenance("thm3p", cur, (old,), w)
    assert p["rule_revised"] and p["rule_commit"] == rule_record.load()["thm3p"]["commit"]
    (r,) = p["revisions"]
    assert (r["commit"][:7], r["verdict"], r["rule"]) == ("542beaa", "not reproduced", old.text)
    # the a6 identity's earlier rule had only the identity as core: the decomposition failing is "partly"
    w6 = {"statement": {"pairwise variance identity": True, "merged-group decomposition": False}}
    (r6,) = rule_record.provenance("a6_identity", CLAIMS["a6_identity"].rule, THEORY_REVISIONS["a6_identity"], w6)[
        "revisions"
    ]
    assert r6["verdict"] == "partly reproduced" and CLAIMS["a6_identity"].rule.decide(w6).verdict == "not reproduced"
    # without a witness (the check did not pass) an earlier rule gives no verdict
    assert rule_record.provenance("thm3p", cur, (old,), None)["revisions"][0]["verdict"] is None
    # without the executable rule, the entry says so
    lost = rule_record.provenance("thm3p", cur, (statements("other", ("x",)),), w)["revisions"][0]
    assert lost["verdict"] is None and "revisions table" in lost["reason"]


def _ledger_rows(tmp_path, mutate=None):
    files = copy.deepcopy(base_results())
    if mutate:
        mutate(files)
    return _rows(tmp_path, files)


def test_ledger_flags_the_revised_latency_rule_with_both_verdicts(tmp_path):
    """A flat latency curve: partly under the current rule (no line fits), reproduced under 4b99ac9's
    (log–log slope only), partly under 3943dde's (a line only)."""
    r = _ledger_rows(tmp_path, _latency_curve(FLAT))["latency"]
    assert r["verdict"] == "partly reproduced" and r["rule_revised"]
    assert r["rule_commit"] == rule_record.load()["latency"]["commit"]
    assert [(e["commit"][:7], e["verdict"]) for e in r["revisions"]] == [
        ("4b99ac9", "reproduced"),
        ("3943dde", "partly reproduced"),
    ]
    assert "rule revised in" in ledger.revision_flag(r) and "4b99ac9: reproduced" in ledger.revision_flag(r)


def test_ledger_static_revision_passes_by_lack_of_power(tmp_path):
    """3 of 30 static questions lost: the earlier rule (CI reaching 0) calls it reproduced, the
    non-inferiority rule does not."""

    def lose3(files):
        for q in files["bench.json"]["questions"]:
            if q["system"] == "fr-full" and q["attack_vector"][:3] == "AV3" and int(q["id"][1:]) < 3:
                q["passed"] = False

    r = _ledger_rows(tmp_path, lose3)["static_zero_cost"]
    assert r["verdict"] == "not reproduced"
    assert [(e["commit"][:7], e["verdict"]) for e in r["revisions"]] == [("3943dde", "reproduced")]


def test_unrevised_rows_carry_their_commit_and_no_flag(tmp_path):
    rows = _ledger_rows(tmp_path)
    m = rows["multiplier"]
    assert (m["rule_revised"], m["revisions"], m["rule_commit"][:7]) == (False, [], "3943dde")
    assert ledger.revision_flag(m) == ""
