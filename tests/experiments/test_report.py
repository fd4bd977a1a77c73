"""REPORT.md as a reader meets it (experiments.reproduce.render_report) on hand-written results whose
verdicts are known by construction: its first line counts the two kinds apart (empirical first),
each claim of the verdict table links to its own section, every rule shows the commit that wrote it,
a revised rule shows the earlier rule's verdict, and each figure is embedded beside its claims by a
relative link to a file that exists."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from support.figure_samples import SAMPLES
from support.ledger import FLAT, _latency_curve, _write, base_results

from experiments import ledger
from experiments.reproduce import Run, render_report
from paper_figures import build
from theory import rule_record
from theory._base import CLAIMS
from theory.run import load_claim_modules

load_claim_modules()


def _a6_gap() -> dict:
    """A theory claim the ledger does not restate: empirical, not reproduced."""
    return {
        "id": "a6_gap",
        "kind": "empirical",
        "paper": "measured gap 36.9% vs analytical lower bound 10.1%",
        "ours": "47.4% = 47.4%",
        "check": "pass",
        "verdict": "not reproduced",
        "rule": CLAIMS["a6_gap"].rule.text,
        "reason": "gap equals the bound",
        "parts": [{"name": "gap above the bound", "holds": False, "detail": "47.4% = 47.4%", "core": True}],
        "diagnosis": None,
        "rule_commit": rule_record.load()["a6_gap"]["commit"],
        "rule_date": rule_record.load()["a6_gap"]["date"],
        "rule_revised": False,
        "revisions": [],
    }


def _report(tmp_path: Path, *, figures=("fig_latency",), skipped=None) -> tuple[str, Path]:
    files = copy.deepcopy(base_results())
    _latency_curve(FLAT)(files)  # latency: partly under today's rule, reproduced under 4b99ac9's
    files["theory.json"]["claims"].append(_a6_gap())
    out = tmp_path / "out"
    run = Run(out)
    _write(run.results, files)
    if figures:  # the figure scripts on their own sample inputs, as fr reproduce runs them
        res = build.build_all(_write(tmp_path / "samples", SAMPLES), out / "figures", scripts=figures)
        assert not res["failures"], res["failures"]
        run.figures = res["outputs"]
    run.skipped = dict(skipped or {})
    rows = ledger.evaluate(run.results)
    return render_report(run.results, run, rows, quick=True, label="hand-written", embedder="hash"), out


def test_first_line_counts_empirical_then_formal(tmp_path):
    text, _ = _report(tmp_path, figures=())
    # by construction: 14 own rows + 11 rows of the paper's empirical claims (experiments/ledger_paper.py)
    # + 4 restated corpus claims + a6_gap are empirical (latency partly; lme_absolute, slot_noise and
    # granularity never comparable; a6_gap not reproduced); thm1, thm2, thm3p, thm3pp, a12 formal
    assert text.split("\n", 1)[0] == (
        "empirical: 25 of 30 reproduced (1 partly, 1 not, 3 not comparable); "
        "formal: 5 of 5 verified (0 partly, 0 not, 0 not comparable)"
    )


def test_skipped_parts_are_not_counted(tmp_path):
    text, _ = _report(tmp_path, figures=(), skipped={"longmemeval": "data absent"})
    assert text.split("\n", 1)[0] == (
        "empirical: 23 of 27 reproduced (1 partly, 1 not, 2 not comparable); "
        "formal: 5 of 5 verified (0 partly, 0 not, 0 not comparable); 3 skipped (their data absent)"
    )


def test_every_claim_row_links_to_its_section(tmp_path):
    text, _ = _report(tmp_path, figures=())
    table = text.split("## Verdicts", 1)[1].split("\n## ", 1)[0]
    links = re.findall(r"^\| \[([a-z0-9_]+)\]\(#([a-z0-9_-]+)\) \|", table, flags=re.M)
    ids = [r.id for r in ledger.LEDGER] + ["a6_gap"]
    assert [cid for cid, _ in links] == ids
    anchors = set(re.findall(r'<a id="([a-z0-9_-]+)"></a>', text))
    assert all(a in anchors for _, a in links)
    # the anchor sits right above the claim's own section
    for cid, a in links:
        assert re.search(rf'<a id="{a}"></a>\n\n### {cid}\n', text), cid


def test_each_claim_shows_its_rule_commit_and_revisions(tmp_path):
    text, _ = _report(tmp_path, figures=())
    rec = rule_record.load()
    for r in ledger.LEDGER:
        if r.rule is not None:
            assert f"written in commit `{rec[r.id]['commit'][:10]}`" in text, r.id
    lat = text.split('<a id="claim-latency"></a>', 1)[1].split("<a id=", 1)[0]
    assert "**partly reproduced**" in lat
    assert "earlier rule** (commit `4b99ac9" in lat and "on this run's witness: **reproduced**" in lat
    revised = text.split("## Rules revised after a verdict", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^- \[\*\*([a-z0-9_]+)\*\*\]", revised, flags=re.M) == [
        "latency",
        "slot_noise",
        "granularity",
        "static_zero_cost",
    ]
    assert "4b99ac9: reproduced" in revised
    row = next(ln for ln in text.splitlines() if ln.startswith("| [latency]"))
    assert "⚑ rule revised" in row and "4b99ac9: reproduced" in row


def test_figures_are_embedded_beside_their_claims_by_relative_links(tmp_path):
    text, out = _report(tmp_path, figures=("fig_latency", "tab_ablation"))
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert images and all(not Path(p).is_absolute() and (out / p).is_file() for p in images)
    lat = text.split('<a id="claim-latency"></a>', 1)[1].split("<a id=", 1)[0]
    assert "![fig_latency](figures/fig_latency.png)" in lat
    tables = text.split('<a id="claim-ablation"></a>', 1)[1].split("<a id=", 1)[0]
    assert "[tab_ablation.md](figures/tab_ablation.md)" in tables
    multiplier = text.split('<a id="claim-multiplier"></a>', 1)[1].split("<a id=", 1)[0]
    assert "![" not in multiplier  # its figure was not built in this run
    listing = text.split("## Figures and tables", 1)[1].split("\n## ", 1)[0]
    assert "- [fig_latency.png](figures/fig_latency.png) (shown with: [latency](#claim-latency))" in listing
    assert "![" not in listing  # each image is embedded once, beside its claims


def test_every_figure_script_names_claims_that_exist():
    known = {r.id for r in ledger.LEDGER} | set(CLAIMS)
    assert set(build.SUPPORTS) == set(build.SCRIPTS)
    for script, claims in build.SUPPORTS.items():
        assert set(claims) <= known, script
        if script.startswith("fig_"):
            assert claims, f"{script} draws a figure that no claim shows"


def test_ledger_json_and_manifest_fields(tmp_path):
    """ledger.json rows carry kind, the rule's commit and the revision flag (what fr reproduce writes)."""
    files = copy.deepcopy(base_results())
    rows = ledger.evaluate(_write(tmp_path / "r", files))
    back = json.loads(json.dumps({"rows": rows}, default=str))["rows"]
    for r in back:
        assert r["kind"] in ("empirical", "formal")
        assert {"rule_commit", "rule_date", "rule_revised", "revisions"} <= set(r), r["id"]
