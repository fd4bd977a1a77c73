"""A scoring corpus built from LifecycleBench suites (suite format v1), for the data claims.

``build_corpus(suites, embedder)`` turns every question of every suite into one row of candidate
edges — all facts of the persona plus the user turns of its filler sessions (SPEC §5) — with
the per-edge inputs the frcore kernels take (:class:`frcore.Candidates`) and the gold
``support`` / ``wrong`` marks. Our choices, documented here (the paper is silent on them):

* **σ** = cosine of the embedder's unit vectors of question text and edge text, clipped to [0, 1].
* **soft category weights**: a fact's ``categories`` (normalised to sum 1); a filler turn has no
  extracted category and gets ``OTHER = 1`` (the "+1" category). With
  ``categories="router"`` every fact's weights come from FR-Bank's router instead
  (:meth:`frcore.bank.Router.categorize`, soft by construction) — the *metadata provenance*
  variant: the persona files carry one gold category per fact, while the paper's bank was
  filled by an LLM extractor with soft memberships.
* **ages** at the question's ``asked_at`` (hours): absolute clock = asked_at − said_at;
  inter-session clock = (date of the last session on or before asked_at) − said_at, floored at
  0 (time elapsed across the conversation, without the idle stretch before the question);
  conversational clock = number of user messages said after the edge (for a fact: user turns
  on strictly later days; for a turn: user turns after it in (said_at, session, list) order).
* **event times**: ``hours_to_event`` = event_time − asked_at in hours (NaN without one).
* **lifecycle states** as of ``asked_at``, from slots, links, times and confidence only (never
  ``role``) — :func:`derive_states`.
* numeric flag and confidence are the fact's; filler turns are non-numeric with confidence 1.
* routing r: 1 for each of the question's ``relevant_categories``; intent from ``intent``.

:func:`rescale_sigma` gives the *σ-scale* variant of a built corpus (σ divided by the question's
largest σ; see there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

import frcore
from frcore import CATEGORY_NAMES, N_CATEGORIES, State, category_index

#: Default built-in corpus: this many generated personas (as ``fr bench run``), from this seed.
DEFAULT_PERSONAS = 20
DEFAULT_SEED = 0


def _hours(stamp: Any, field: str, item: str) -> float:
    """ISO date or datetime → hours since the epoch, by frcore's one timestamp rule
    (:func:`frcore.parse_time`; naive stamps are UTC); ``ValueError`` naming the item and field."""
    t = frcore.parse_time(stamp, field, error=lambda problem: ValueError(f"{item}: field {field!r}: {problem}"))
    return frcore.hours_since_epoch(t)


@dataclass(frozen=True)
class Corpus:
    """Per question, its padded candidate edges (axis 1, length K) as frcore arrays.

    ``cands`` / ``queries`` are stacked :class:`frcore.Candidates` / :class:`frcore.Query`
    (shapes (B, K, ...) and (B, ...)); NumPy mirrors of the main fields are kept for the theory
    code. ``item_ids[b][j]`` is the id of candidate j of question b (padding rows have no id).
    """

    question_ids: tuple[str, ...]
    personas: tuple[str, ...]
    attack_vectors: tuple[str, ...]
    intents: np.ndarray  # (B,) int
    item_ids: tuple[tuple[str, ...], ...]
    is_fact: np.ndarray  # (B, K) bool
    valid: np.ndarray  # (B, K) bool
    sim: np.ndarray  # (B, K)
    weights: np.ndarray  # (B, K, C)
    ages: np.ndarray  # (B, K, 3) absolute h, inter-session h, messages
    said_at: np.ndarray  # (B, K) hours since epoch
    hours_to_event: np.ndarray  # (B, K) NaN = none
    state: np.ndarray  # (B, K) int
    confidence: np.ndarray  # (B, K)
    numeric: np.ndarray  # (B, K) bool
    slot: tuple[tuple[str | None, ...], ...]
    support: np.ndarray  # (B, K) bool
    wrong: np.ndarray  # (B, K) bool
    cands: frcore.Candidates
    queries: frcore.Query
    #: the parameters the corpus is scored under (``None``: :func:`frcore.default_params`);
    #: ``fr theory --params FILE`` / ``fr calibrate --params FILE`` set them
    params: frcore.LifecycleParams | None = None

    @property
    def n_questions(self) -> int:
        return len(self.question_ids)

    @property
    def primary(self) -> np.ndarray:
        """(B, K) primary category index (argmax of the soft weights)."""
        return np.argmax(self.weights, axis=-1)

    def activation(self, params: frcore.LifecycleParams | None = None) -> np.ndarray:
        """(B, K) activation a of every candidate under frcore's own kernel (the corpus's
        parameters unless ``params`` is given; the default parameters unless set)."""
        params = self.scoring_params() if params is None else params
        terms = frcore.score_queries(params, self.queries, self.cands)
        return np.asarray(terms.activation, dtype=np.float64)

    def scoring_params(self) -> frcore.LifecycleParams:
        """The parameters this corpus is scored under."""
        return frcore.default_params() if self.params is None else self.params

    def entries(self) -> dict[str, np.ndarray]:
        """Unique edges of the corpus (facts and filler turns, by id): weights and is_fact."""
        seen: dict[str, tuple[np.ndarray, bool]] = {}
        for b, ids in enumerate(self.item_ids):
            for j, i in enumerate(ids):
                if i not in seen:
                    seen[i] = (self.weights[b, j], bool(self.is_fact[b, j]))
        order = sorted(seen)
        return {
            "ids": np.array(order, dtype=object),
            "weights": np.array([seen[i][0] for i in order]).reshape(-1, N_CATEGORIES),
            "is_fact": np.array([seen[i][1] for i in order], dtype=bool),
        }


def derive_states(facts: Sequence[Mapping[str, Any]], asked_at_h: float) -> dict[str, int]:
    """Lifecycle state of each fact as of ``asked_at`` — FR-Bank's own rules
    (:func:`frcore.bank.derive_states`; one source of truth, never reads ``role``).
    Facts said after ``asked_at`` are reported ACTIVE (they never compete: the corpus drops them)."""
    from frcore.bank import derive_states as bank_states, parse_fact

    records = [parse_fact(dict(f), where="corpus fact") for f in facts]
    known = {r.id for r in records}
    for r in records:  # the bank's store rejects dangling links on ingest; so does the corpus
        for kind, targets in r.links.items():
            for t in targets:
                if t not in known:
                    raise ValueError(f"links.{kind}: fact {r.id} links to unknown id {t!r}")
    at = frcore.time_from_hours(asked_at_h)
    states = bank_states(records, at)
    return {r.id: int(max(s, int(State.ACTIVE))) for r, s in zip(records, states)}


def _weights_row(categories: Mapping[str, float] | None, item: str) -> np.ndarray:
    if not categories:
        raise ValueError(f"categories: empty for {item}")
    w = np.zeros(N_CATEGORIES)
    for name, v in categories.items():
        try:
            w[category_index(name)] += float(v)
        except ValueError as e:
            raise ValueError(f"categories: {item}: {e}") from None
    if (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"categories: {item}: weights must be ≥ 0 with a positive sum")
    return w / w.sum()


def _as_dict(suite: Any) -> Mapping[str, Any]:
    """A suite as a suite-format-v1 mapping (parsed ``Suite`` records are converted back)."""
    if isinstance(suite, Mapping):
        return suite
    from frcore.bench import suite_to_dict

    return suite_to_dict(suite)


def _suite_items(suite: Mapping[str, Any]):
    """Facts and filler user turns of one suite, with per-item static fields."""
    persona = suite.get("persona", "?")
    sessions = suite.get("sessions") or []
    filler = {s["id"] for s in sessions if s.get("type") == "filler"}
    facts = list(suite.get("facts") or [])
    turns = [t for t in (suite.get("turns") or []) if t.get("role") == "user"]
    order = sorted(
        range(len(turns)),
        key=lambda i: (_hours(turns[i]["said_at"], "said_at", turns[i]["id"]), turns[i]["session"], i),
    )
    rank = {turns[i]["id"]: r for r, i in enumerate(order)}
    turn_h = np.array(sorted(_hours(t["said_at"], "said_at", t["id"]) for t in turns))
    items = []
    for f in facts:
        for key in ("id", "text", "said_at", "categories"):
            if key not in f:
                raise ValueError(f"facts: {persona}: fact {f.get('id', '?')} lacks {key!r}")
        h = _hours(f["said_at"], "said_at", f["id"])
        later = int(len(turn_h) - np.searchsorted(turn_h, np.floor(h / 24.0) * 24.0 + 24.0, side="left"))
        items.append(
            dict(
                id=f["id"],
                text=f["text"],
                fact=True,
                w=_weights_row(f["categories"], f["id"]),
                said=h,
                msgs=later,
                event=f.get("event_time"),
                conf=float(f.get("confidence", 1.0)),
                numeric=bool(f.get("numeric", False)),
                slot=f.get("slot"),
            )
        )
    other = np.zeros(N_CATEGORIES)
    other[int(frcore.Category.OTHER)] = 1.0
    for t in turns:
        if t["session"] in filler:
            items.append(
                dict(
                    id=t["id"],
                    text=t["text"],
                    fact=False,
                    w=other,
                    said=_hours(t["said_at"], "said_at", t["id"]),
                    msgs=len(turns) - 1 - rank[t["id"]],
                    event=None,
                    conf=1.0,
                    numeric=False,
                    slot=None,
                )
            )
    session_h = sorted(_hours(s["date"], "date", f"{persona} session {s['id']}") for s in sessions)
    return facts, items, session_h


CATEGORY_SOURCES = ("gold", "router")


def build_corpus(suites: Sequence[Any], embedder, categories: str = "gold") -> Corpus:
    """Build the :class:`Corpus` of every question of ``suites`` (suite format v1).

    Args:
      suites: suite-format-v1 mappings (``facts``, ``turns``, ``sessions``, ``questions``,
        ``asked_at``) or the suite records :func:`frcore.bench.load_suites` returns.
      embedder: anything with ``embed(texts) -> (n, d)`` unit rows (frcore.bank embedders).
      categories: ``"gold"`` (each fact's own ``categories``) or ``"router"`` (soft weights from
        FR-Bank's router on the fact's text and vector, for every fact).

    Raises ``ValueError`` naming the persona and id for a gold id that is not a candidate, an
    unknown category, a malformed date, or an unknown link target.
    """
    if not suites:
        raise ValueError("suites: empty; nothing to build a corpus from")
    if categories not in CATEGORY_SOURCES:
        raise ValueError(f"categories: {categories!r} is not one of {CATEGORY_SOURCES}")
    router = None
    if categories == "router":
        from frcore.bank import Router

        router = Router(embedder)
    rows = []
    for suite in suites:
        suite = _as_dict(suite)
        persona = suite.get("persona", "?")
        facts, items, session_h = _suite_items(suite)
        ids = [it["id"] for it in items]
        index = {i: j for j, i in enumerate(ids)}
        emb_items = np.asarray(embedder.embed([it["text"] for it in items]), dtype=np.float64)
        if router is not None:
            for j, it in enumerate(items):
                if it["fact"]:
                    it["w"] = _weights_row(router.categorize(it["text"], emb_items[j]), it["id"])
        questions = list(suite.get("questions") or [])
        emb_q = np.asarray(embedder.embed([q["text"] for q in questions]), dtype=np.float64) if questions else None
        states_cache: dict[float, dict[str, int]] = {}
        for qi, q in enumerate(questions):
            assert emb_q is not None  # embedded above whenever there are questions
            asked = _hours(q.get("asked_at") or suite.get("asked_at"), "asked_at", q.get("id", "?"))
            if asked not in states_cache:
                states_cache[asked] = derive_states(facts, asked)
            st = states_cache[asked]
            keep = [j for j, it in enumerate(items) if it["said"] <= asked]
            pos = {j: n for n, j in enumerate(keep)}
            sup = np.zeros(len(keep), bool)
            wr = np.zeros(len(keep), bool)
            for field, mark in (("support", sup), ("wrong", wr)):
                for i in q.get(field) or []:
                    if i not in index or index[i] not in pos:
                        raise ValueError(
                            f"questions.{field}: {persona}: question {q.get('id')} names {i!r}, not a candidate edge"
                        )
                    mark[pos[index[i]]] = True
            last_session = max([h for h in session_h if h <= asked] or [asked])
            its = [items[j] for j in keep]
            sim = np.clip(emb_items[keep] @ emb_q[qi], 0.0, 1.0)
            ages = np.array(
                [[asked - it["said"], max(last_session - it["said"], 0.0), it["msgs"]] for it in its]
            ).reshape(-1, 3)
            ages = np.maximum(ages, 0.0)
            hte = np.array(
                [(_hours(it["event"], "event_time", it["id"]) - asked) if it["event"] else np.nan for it in its]
            )
            rows.append(
                dict(
                    qid=q.get("id", "?"),
                    persona=persona,
                    av=q.get("attack_vector", ""),
                    intent=frcore.intent_index(q.get("intent", "current")),
                    routing={c: 1.0 for c in (q.get("relevant_categories") or [])},
                    ids=tuple(it["id"] for it in its),
                    is_fact=np.array([it["fact"] for it in its]),
                    sim=sim,
                    w=np.array([it["w"] for it in its]).reshape(-1, N_CATEGORIES),
                    ages=ages,
                    said=np.array([it["said"] for it in its]),
                    hte=hte,
                    state=np.array([st.get(it["id"], int(State.ACTIVE)) for it in its], dtype=np.int32),
                    conf=np.array([it["conf"] for it in its]),
                    numeric=np.array([it["numeric"] for it in its], bool),
                    slot=tuple(it["slot"] for it in its),
                    sup=sup,
                    wrong=wr,
                )
            )
    if not rows:
        raise ValueError("suites: no questions; nothing to build a corpus from")
    K = frcore.bucket_size(max(len(r["ids"]) for r in rows))
    B = len(rows)

    def pad(key, fill, dtype=None):
        first = rows[0][key]
        out = np.full((B, K) + first.shape[1:], fill, dtype=dtype or first.dtype)
        for b, r in enumerate(rows):
            out[b, : len(r[key])] = r[key]
        return out

    weights = pad("w", 0.0)
    valid = np.zeros((B, K), dtype=bool)
    for b, r in enumerate(rows):
        valid[b, : len(r["ids"])] = True
    weights[~valid, int(frcore.Category.OTHER)] = 1.0
    cand_list, query_list = [], []
    for r in rows:
        cand_list.append(
            frcore.make_candidates(r["sim"], r["w"], r["ages"], r["state"], r["hte"], r["conf"], r["numeric"], pad_to=K)
        )
        routing = r["routing"]
        for name in routing:
            category_index(name)  # raises naming the category
        query_list.append(frcore.make_query(r["intent"], routing))
    return Corpus(
        question_ids=tuple(r["qid"] for r in rows),
        personas=tuple(r["persona"] for r in rows),
        attack_vectors=tuple(r["av"] for r in rows),
        intents=np.array([r["intent"] for r in rows]),
        item_ids=tuple(r["ids"] for r in rows),
        is_fact=pad("is_fact", False),
        valid=valid,
        sim=pad("sim", 0.0),
        weights=weights,
        ages=pad("ages", 0.0),
        said_at=pad("said", np.nan),
        hours_to_event=pad("hte", np.nan),
        state=pad("state", 0),
        confidence=pad("conf", 1.0),
        numeric=pad("numeric", False),
        slot=tuple(r["slot"] for r in rows),
        support=pad("sup", False),
        wrong=pad("wrong", False),
        cands=frcore.stack_candidates(cand_list),
        queries=frcore.stack_queries(query_list),
    )


# --------------------------------------------------------------------------- sources


def read_suites(path: str) -> list[Any]:
    """Suites from a path (a suite JSON file or a folder of them), read and validated by
    :func:`frcore.bench.load_suites`."""
    from frcore.bench import load_suites

    return list(load_suites(path))


def default_suites(personas: int = DEFAULT_PERSONAS, seed: int = DEFAULT_SEED) -> list[dict]:
    """The built-in generated suites (:func:`frcore.bench.generate_suites`)."""
    from frcore.bench import generate_suites

    return list(generate_suites(personas, seed))


def get_embedder(name: str = "minilm"):
    """The embedder by name, as every other command builds it (``minilm`` by default, with the
    persistent vector cache; ``hash`` for tests)."""
    from frcore.bench import make_embedder

    return make_embedder(name)


def load_suites(suite: str | None = None, personas=None, seed: int = DEFAULT_SEED) -> tuple[list, str]:
    """(suites, label) exactly as ``fr bench run`` reads them: ``suite`` a file or folder (the
    first ``personas`` of it if given, or the personas named by a list of ids), or ``None`` /
    ``"synthetic"`` for ``personas`` generated suites (default 20)."""
    from frcore.bench import load_suites_arg

    if isinstance(personas, (int, float, np.integer)) and not isinstance(personas, bool):
        if int(personas) < 1:
            raise ValueError(f"personas: must be ≥ 1, got {personas}")
        personas = int(personas)
    return load_suites_arg(suite or "synthetic", personas, seed)


def load_corpus(suite: str | None = None, personas=None, embedder: str = "minilm", seed: int = DEFAULT_SEED) -> Corpus:
    """The corpus for ``fr theory`` / ``fr calibrate`` from the same suites ``fr bench run``
    reads (see :func:`load_suites`)."""
    suites, _ = load_suites(suite, personas, seed)
    return build_corpus(suites, get_embedder(embedder))


def rescale_sigma(corpus: Corpus) -> Corpus:
    """The σ-scale variant: every question's σ divided by its largest σ over its candidates
    (σ' = σ / max_j σ_j, so the best match of each question has σ' = 1) — the rule of FR-Bank's
    ``PipelineConfig(sigma_scale="max")`` (:func:`frcore.bank.scale_sigma_max`).

    A data-independent rule, for diagnosis only: our σ is a MiniLM cosine (99th percentile of
    top-10 items ≈ 0.75), while the paper's thresholds (semantic floor at σ ≥ 0.95, numeric
    rescue at σ ≥ 0.85) were set on its retrieval backend's own score; max-normalising puts
    each question's best candidate at the top of the scale the thresholds assume."""
    from frcore.bank import scale_sigma_max  # the one definition of the rule

    new = np.zeros_like(corpus.sim)
    for b in range(corpus.n_questions):
        v = corpus.valid[b]
        new[b, v] = scale_sigma_max(corpus.sim[b, v])
    cands = corpus.cands._replace(sim=np.asarray(new, dtype=np.asarray(corpus.cands.sim).dtype))
    return replace(corpus, sim=new, cands=cands)


def category_name(i: int) -> str:
    return CATEGORY_NAMES[int(i)]
