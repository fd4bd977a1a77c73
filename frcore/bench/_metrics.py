"""Judge-free LifecycleBench scoring (SPEC §5): pure functions over ranked id lists.

For one question, a system returns ranked item ids; only the top ``TOP_K = 10`` count. With
``support`` the items that support the correct answer and ``wrong`` the items that surface an
outdated / expired / retracted value, the paper's pass rules are, per attack vector:

- AV1, AV4, AV6, AV9: a support item in the top-10 and no wrong item ranked above the first
  support item.
- AV2: no wrong item in the top-5, **or** a support item in the top-10 ranked above every wrong
  item of the top-10 (so AV2 can pass with no support item retrieved at all).
- AV7: a support item in the top-10 and no wrong item in the top-5.
- AV3, AV5, AV8: a support item in the top-10.

Per-question diagnostics (our exact definitions where the paper gives only a name):

- ``stale``: a wrong item in the top-10.
- ``hit@k``: a support item within the top-k; ``rr``: 1 / rank of the first support item within
  the top-10, 0 if none (mean over questions = MRR@10).
- ``pse`` (positional staleness exposure): the number of top-10 positions holding a wrong item
  divided by 10 — the denominator is always 10, also for rankings shorter than 10, so returning
  fewer items is not penalised per position. Range [0, 1].
- ``wsr`` (weighted staleness risk): Σ over wrong items in the top-10 of the rank weight
  3.0 (ranks 1–3), 1.0 (ranks 4–7), 2.0 (ranks 8–10). **Not normalised**: range [0, 19]
  (19 = all ten positions wrong).

Across systems: :func:`paired_bootstrap` (percentile CI of a difference of pass rates on the same
questions) and :func:`mcnemar` (exact binomial or continuity-corrected χ²).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

from ._suite import attack_vector_key

__all__ = [
    "AV_KEYS",
    "METRIC_KEYS",
    "RANK_WEIGHTS",
    "TOP_K",
    "Outcome",
    "aggregate",
    "markdown_table",
    "mcnemar",
    "paired_bootstrap",
    "pass_rule",
    "question_outcome",
]

TOP_K = 10
#: Rank weights of the weighted staleness risk for ranks 1…10 (SPEC §5).
RANK_WEIGHTS: tuple[float, ...] = (3.0, 3.0, 3.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0)
AV_KEYS: tuple[str, ...] = tuple(f"AV{i}" for i in range(1, 10))
#: Keys of the overall and per-AV tables produced by :func:`aggregate`.
METRIC_KEYS: tuple[str, ...] = ("pass", "staleness", "hit@1", "hit@5", "hit@10", "mrr", "pse", "wsr", "n")

_RULE_OF_AV = {
    "AV1": "support_first",
    "AV4": "support_first",
    "AV6": "support_first",
    "AV9": "support_first",
    "AV2": "no_wrong_top5_or_support_first",
    "AV7": "support_and_no_wrong_top5",
    "AV3": "support",
    "AV5": "support",
    "AV8": "support",
}


def pass_rule(attack_vector: str) -> str:
    """Name of the pass rule for an attack vector (full name or ``AVn`` key):
    ``support_first`` (AV1/4/6/9), ``no_wrong_top5_or_support_first`` (AV2),
    ``support_and_no_wrong_top5`` (AV7) or ``support`` (AV3/5/8)."""
    return _RULE_OF_AV[attack_vector_key(attack_vector)]


@dataclass(frozen=True)
class Outcome:
    """The judge-free outcome of one question (ranks are 1-based, ``None`` if not in the top-10)."""

    av: str
    passed: bool
    stale: bool
    hit1: bool
    hit5: bool
    hit10: bool
    rr: float
    pse: float
    wsr: float
    first_support_rank: int | None
    first_wrong_rank: int | None
    n_wrong_top10: int

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return asdict(self)


def _ids(name: str, ids: Iterable[Any]) -> list[str]:
    if isinstance(ids, (str, bytes)):
        raise ValueError(f"{name}: expected a sequence of ids, got a single string {ids!r}")
    out = list(ids)
    seen: dict[str, int] = {}
    for i, x in enumerate(out):
        if not isinstance(x, str):
            raise ValueError(f"{name}[{i}]: expected a string id, got {type(x).__name__} {x!r}")
        if x in seen:
            raise ValueError(f"{name}[{i}]: duplicate id {x!r} (first at index {seen[x]})")
        seen[x] = i
    return out


def question_outcome(
    attack_vector: str,
    ranked_ids: Sequence[str],
    support: Iterable[str],
    wrong: Iterable[str],
) -> Outcome:
    """Score one question from a ranked id list by the paper's rules (module docstring).

    Args:
      attack_vector: ``"AV1_superseded_preference"`` … or the bare key ``"AV1"`` … ``"AV9"``.
      ranked_ids: item ids, best first; only the first :data:`TOP_K` count; no duplicates.
      support: ids supporting the correct answer.
      wrong: ids surfacing a wrong (outdated / expired / retracted) value; disjoint from support.

    Returns:
      :class:`Outcome`.

    Raises:
      ValueError: unknown attack vector, non-string or duplicate ids (naming the index), or an id
        in both ``support`` and ``wrong``.

    Example:
      >>> o = question_outcome("AV1", ["w", "s"], support=["s"], wrong=["w"])
      >>> o.passed, o.stale, o.rr, o.wsr
      (False, True, 0.5, 3.0)
    """
    av = attack_vector_key(attack_vector)
    ranked = _ids("ranked_ids", ranked_ids)[:TOP_K]
    sup = set(_ids("support", support))
    wr = _ids("wrong", wrong)
    for i, x in enumerate(wr):
        if x in sup:
            raise ValueError(f"wrong[{i}]: id {x!r} is also in support")
    wrs = set(wr)

    support_ranks = [r for r, x in enumerate(ranked, start=1) if x in sup]
    wrong_ranks = [r for r, x in enumerate(ranked, start=1) if x in wrs]
    s1 = support_ranks[0] if support_ranks else None
    w1 = wrong_ranks[0] if wrong_ranks else None
    has_support = s1 is not None
    support_first = s1 is not None and (w1 is None or s1 < w1)
    wrong_in_top5 = w1 is not None and w1 <= 5

    rule = _RULE_OF_AV[av]
    if rule == "support_first":
        passed = support_first
    elif rule == "no_wrong_top5_or_support_first":
        passed = (not wrong_in_top5) or support_first
    elif rule == "support_and_no_wrong_top5":
        passed = has_support and not wrong_in_top5
    else:
        passed = has_support

    return Outcome(
        av=av,
        passed=bool(passed),
        stale=w1 is not None,
        hit1=s1 is not None and s1 <= 1,
        hit5=s1 is not None and s1 <= 5,
        hit10=has_support,
        rr=1.0 / s1 if s1 is not None else 0.0,
        pse=len(wrong_ranks) / TOP_K,
        wsr=float(sum(RANK_WEIGHTS[r - 1] for r in wrong_ranks)),
        first_support_rank=s1,
        first_wrong_rank=w1,
        n_wrong_top10=len(wrong_ranks),
    )


def _table(outcomes: Sequence[Outcome]) -> dict[str, float | int]:
    n = len(outcomes)
    mean = lambda xs: float(sum(xs)) / n  # noqa: E731
    return {
        "pass": mean(o.passed for o in outcomes),
        "staleness": mean(o.stale for o in outcomes),
        "hit@1": mean(o.hit1 for o in outcomes),
        "hit@5": mean(o.hit5 for o in outcomes),
        "hit@10": mean(o.hit10 for o in outcomes),
        "mrr": mean(o.rr for o in outcomes),
        "pse": mean(o.pse for o in outcomes),
        "wsr": mean(o.wsr for o in outcomes),
        "n": n,
    }


def aggregate(outcomes: Iterable[Outcome]) -> dict[str, Any]:
    """Means over questions: ``{"overall": {pass, staleness, hit@1, hit@5, hit@10, mrr, pse, wsr,
    n}, "per_av": {"AV1": {...same keys}, ...}}`` (only attack vectors present, in AV order).

    ``pass``, ``staleness`` and ``hit@k`` are shares in [0, 1]; ``mrr`` is MRR@10; ``pse`` and
    ``wsr`` are per-question means of the definitions in the module docstring.
    """
    outs = list(outcomes)
    if not outs:
        raise ValueError("outcomes: empty; nothing to aggregate")
    for i, o in enumerate(outs):
        if not isinstance(o, Outcome):
            raise ValueError(f"outcomes[{i}]: expected an Outcome, got {type(o).__name__}")
    per_av = {av: _table([o for o in outs if o.av == av]) for av in AV_KEYS if any(o.av == av for o in outs)}
    return {"overall": _table(outs), "per_av": per_av}


def _paired_bools(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    arrs = []
    for name, x in (("a", a), ("b", b)):
        arr = np.asarray(x)
        if arr.ndim != 1:
            raise ValueError(f"{name}: expected a 1-d array of per-question outcomes, got shape {arr.shape}")
        if arr.dtype.kind in "iuf":
            bad = np.flatnonzero(~np.isin(arr, (0, 1)))
            if bad.size:
                i = int(bad[0])
                raise ValueError(f"{name}[{i}]: expected booleans (or 0/1), got {arr[i]!r}")
            arr = arr.astype(bool)
        elif arr.dtype != bool:
            raise ValueError(f"{name}: expected booleans (or 0/1), got dtype {arr.dtype}")
        arrs.append(arr)
    if arrs[0].shape != arrs[1].shape:
        raise ValueError(f"a, b: paired outcomes need equal lengths, got {arrs[0].size} and {arrs[1].size}")
    if arrs[0].size == 0:
        raise ValueError("a, b: empty; nothing to compare")
    return arrs[0], arrs[1]


def paired_bootstrap(a: Any, b: Any, n_boot: int = 10000, seed: int = 0) -> dict[str, Any]:
    """Paired bootstrap of the difference of pass rates, mean(a) − mean(b), on the same questions.

    Questions are resampled with replacement (the pair (a_i, b_i) stays together) ``n_boot``
    times; the 95% CI is the 2.5 / 97.5 percentiles (NumPy's linear interpolation) of the
    resampled differences. Deterministic for a given ``seed``.

    Returns:
      ``{"diff", "ci_low", "ci_high", "mean_a", "mean_b", "n", "n_boot", "seed", "level": 0.95}``.
    """
    x, y = _paired_bools(a, b)
    return bootstrap_difference(x.astype(np.float64), y.astype(np.float64), n_boot=n_boot, seed=seed)


def bootstrap_difference(x: np.ndarray, y: np.ndarray, n_boot: int = 10000, seed: int = 0) -> dict[str, Any]:
    """The resampling core shared by every paired bootstrap here:
    equal-length, already validated float arrays → difference of means with a 95% percentile CI."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise ValueError(f"n_boot: expected a positive integer, got {n_boot!r}")
    d = x - y
    n = d.size
    rng = np.random.default_rng(seed)
    boots = np.empty(int(n_boot), dtype=np.float64)
    chunk = max(1, 2_000_000 // n)
    for start in range(0, int(n_boot), chunk):
        m = min(chunk, int(n_boot) - start)
        boots[start : start + m] = d[rng.integers(0, n, size=(m, n))].mean(axis=1)
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return {
        "diff": float(d.mean()),
        "ci_low": float(lo),
        "ci_high": float(hi),
        "mean_a": float(x.mean()),
        "mean_b": float(y.mean()),
        "n": int(n),
        "n_boot": int(n_boot),
        "seed": seed,
        "level": 0.95,
    }


def paired_bootstrap_mean(a: Any, b: Any, n_boot: int = 10000, seed: int = 0) -> dict[str, Any]:
    """Paired bootstrap of mean(a) − mean(b) for per-question real scores (e.g. recall@10;
    LoCoMo and LongMemEval compare systems with it).

    The pairs (a_i, b_i) are resampled together ``n_boot`` times; the 95% CI is the 2.5 / 97.5
    percentiles of the resampled differences. Deterministic for a given ``seed``. Returns
    ``{"diff", "ci_low", "ci_high", "mean_a", "mean_b", "n", "n_boot", "seed", "level"}``.
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    for name, arr in (("a", x), ("b", y)):
        if arr.ndim != 1:
            raise ValueError(f"{name}: expected a 1-d array of per-question scores, got shape {arr.shape}")
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise ValueError(f"{name}[{int(bad[0])}]: expected a finite number, got {arr[bad[0]]!r}")
    if x.shape != y.shape:
        raise ValueError(f"a, b: paired scores need equal lengths, got {x.size} and {y.size}")
    if x.size == 0:
        raise ValueError("a, b: empty; nothing to compare")
    return bootstrap_difference(x, y, n_boot=n_boot, seed=seed)


def mcnemar(a: Any, b: Any, exact_below: int = 25) -> dict[str, Any]:
    """McNemar's test for paired pass/fail outcomes of two systems on the same questions.

    ``b01`` = questions failed by a and passed by b; ``b10`` = passed by a, failed by b. With
    n_d = b01 + b10 discordant pairs: if n_d < ``exact_below`` the exact two-sided binomial test
    (``scipy.stats.binomtest(min(b01, b10), n_d, 0.5)``, ``method="exact_binomial"``,
    ``statistic`` = min(b01, b10)); otherwise χ² with continuity correction,
    χ² = max(0, |b01 − b10| − 1)² / n_d on 1 degree of freedom (``method="chi2_cc"``). No
    discordant pairs: p = 1.

    Returns:
      ``{"b01", "b10", "n_discordant", "statistic", "p_value", "method", "n"}``.
    """
    x, y = _paired_bools(a, b)
    b01 = int(np.sum(~x & y))
    b10 = int(np.sum(x & ~y))
    nd = b01 + b10
    if nd < exact_below:
        method = "exact_binomial"
        statistic = float(min(b01, b10))
        p = 1.0 if nd == 0 else float(stats.binomtest(min(b01, b10), nd, 0.5).pvalue)
    else:
        method = "chi2_cc"
        statistic = max(0.0, abs(b01 - b10) - 1.0) ** 2 / nd
        p = float(stats.chi2.sf(statistic, 1))
    return {
        "b01": b01,
        "b10": b10,
        "n_discordant": nd,
        "statistic": float(statistic),
        "p_value": min(1.0, p),
        "method": method,
        "n": int(x.size),
    }


# --------------------------------------------------------------------------- markdown

_OPTIONAL = (
    ("hit@1", "Hit@1", "pct"),
    ("hit@5", "Hit@5", "pct"),
    ("hit@10", "Hit@10", "pct"),
    ("mrr", "MRR", "3f"),
    ("pse", "PSE", "pct"),
    ("wsr", "WSR", "2f"),
)


def _num(where: str, table: Mapping[str, Any], key: str) -> float:
    if key not in table:
        raise ValueError(f"{where}: field {key!r} missing")
    v = table[key]
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
        raise ValueError(f"{where}: field {key!r}: expected a finite number, got {v!r}")
    return float(v)


def _fmt(v: float, kind: str) -> str:
    if kind == "pct":
        return f"{100.0 * v:.1f}"
    if kind == "3f":
        return f"{v:.3f}"
    if kind == "2f":
        return f"{v:.2f}"
    return f"{int(v)}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(result: Mapping[str, Any]) -> str:
    """Render an ``fr bench run`` result as a markdown table: one row per system (in the given
    order), overall metrics then the pass rate per attack vector.

    ``result`` = ``{"suite": str, "systems": {NAME: {"overall": {pass, staleness, n, ...},
    "per_av": {"AV1": {pass, staleness, n}, ...}}}, "questions": [...]}``. Rates are shown in %,
    MRR and WSR as numbers; optional overall columns (hit@k, mrr, pse, wsr) appear when any
    system has them ("—" where one lacks it), and an AV column appears when any system has that
    AV. The AV header carries the question count when all systems agree on it, otherwise each
    cell does.

    Raises:
      ValueError: naming the system and field for a malformed result.
    """
    if not isinstance(result, Mapping):
        raise ValueError(f"result: expected a mapping, got {type(result).__name__}")
    suite = result.get("suite")
    if not isinstance(suite, str):
        raise ValueError(f"result: field 'suite': expected a string, got {suite!r}")
    systems = result.get("systems")
    if not isinstance(systems, Mapping) or not systems:
        raise ValueError("result: field 'systems': expected a non-empty mapping NAME → results")

    rows: list[tuple[str, dict[str, float], dict[str, tuple[float, int]]]] = []
    for name, sysres in systems.items():
        where = f"systems[{name!r}]"
        if not isinstance(sysres, Mapping):
            raise ValueError(f"{where}: expected a mapping with 'overall' and 'per_av'")
        overall = sysres.get("overall")
        if not isinstance(overall, Mapping):
            raise ValueError(f"{where}: field 'overall' missing or not a mapping")
        vals = {k: _num(f"{where}.overall", overall, k) for k in ("pass", "staleness", "n")}
        for key, _, _ in _OPTIONAL:
            if key in overall:
                vals[key] = _num(f"{where}.overall", overall, key)
        per_av = sysres.get("per_av")
        if not isinstance(per_av, Mapping):
            raise ValueError(f"{where}: field 'per_av' missing or not a mapping")
        avs: dict[str, tuple[float, int]] = {}
        for av, tab in per_av.items():
            try:
                ok = attack_vector_key(av) == av
            except ValueError:
                ok = False
            if not ok:
                raise ValueError(f"{where}.per_av: key {av!r}: expected AV1 … AV9")
            if not isinstance(tab, Mapping):
                raise ValueError(f"{where}.per_av[{av!r}]: expected a mapping with 'pass' and 'n'")
            avs[av] = (_num(f"{where}.per_av[{av!r}]", tab, "pass"), int(_num(f"{where}.per_av[{av!r}]", tab, "n")))
        rows.append((str(name), vals, avs))

    optional = [(k, h, f) for k, h, f in _OPTIONAL if any(k in v for _, v, _ in rows)]
    av_cols = [av for av in AV_KEYS if any(av in a for _, _, a in rows)]
    av_n: dict[str, int | None] = {}
    for av in av_cols:
        ns = {a[av][1] for _, _, a in rows if av in a}
        av_n[av] = ns.pop() if len(ns) == 1 else None

    header = ["system", "n", "pass %", "stale %"] + [h + (" %" if f == "pct" else "") for _, h, f in optional]
    header += [f"{av} (n={av_n[av]})" if av_n[av] is not None else av for av in av_cols]
    align = ["---", "---:", "---:", "---:"] + ["---:"] * (len(optional) + len(av_cols))
    lines = [
        f"LifecycleBench suite `{_cell(suite)}`: pass, staleness, hits and PSE in %; AV columns are pass % per attack "
        "vector.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(align) + "|",
    ]
    for name, vals, avs in rows:
        cells = [_cell(name), _fmt(vals["n"], "int"), _fmt(vals["pass"], "pct"), _fmt(vals["staleness"], "pct")]
        cells += [_fmt(vals[k], f) if k in vals else "—" for k, _, f in optional]
        for av in av_cols:
            if av not in avs:
                cells.append("—")
            elif av_n[av] is None:
                cells.append(f"{_fmt(avs[av][0], 'pct')} (n={avs[av][1]})")
            else:
                cells.append(_fmt(avs[av][0], "pct"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
