"""Built-in LifecycleBench suite generator (suite format v1, SPEC §5).

The paper's benchmark cannot ship with the project, so this module writes synthetic personas of
the same format and shape, deterministically from ``(seed, persona_index)``: each persona draws
from ``numpy.random.default_rng([seed, persona_index])`` and from nothing else, so personas are
independent and any one can be regenerated alone. All text comes from the data file
``vocab.json``, read and checked by :mod:`._vocab` (our own names, templates and fillers; never
text from the real benchmark).

Shape, mirroring the development split (20 real personas: ~23 facts, 35 sessions over ~18
months of which ~half are filler, ~290 user turns, ~13 questions each): a stable identity;
supersession chains (two versions, or three for a multi-version fact); dated logistics and
obligations, some past and some upcoming at ``asked_at``; one cross-session contradiction; one
plan stated and later retracted; one existing value with a tentative alternative (confidence
0.4); annotated numeric and hobby details. Filler sessions hold distractor chit-chat, hard
distractors that reuse a question's vocabulary, and passing mentions of values: an *old* value
restated before it changed (listed in the question's ``wrong``), a current value restated after
(listed in ``support``).

Gold semantics follow the real data: AV1 / AV4 support = the superseding fact, wrong = the
superseded ones; AV2 (upcoming) support = the upcoming items, wrong = the expired ones; AV7
support = the retraction statement, wrong = the retracted plan; AV9 support = the existing value
and the tentative one; AV3 / AV5 / AV8 have no wrong items except stale hobby values in AV5.

Example:
    >>> from frcore.bench._generator import generate_suite
    >>> suite = generate_suite(0, seed=0)
    >>> suite == generate_suite(0, seed=0), len(suite["sessions"])
    (True, 35)
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._ontology import CATEGORY_NAMES
from . import _vocab as V
from ._suite import ATTACK_VECTORS

__all__ = [
    "ATTACK_VECTORS",
    "GENERATOR_VERSION",
    "content_words",
    "generate_suite",
    "generate_suites",
    "lexical_overlap_stats",
    "write_suites",
]

#: Bumped whenever the output for a given (seed, persona_index) changes.
GENERATOR_VERSION = 1

N_SESSIONS = 35
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_AMOUNT_RANGES: dict[str, tuple[int, int, int]] = {  # (low, high, step)
    "rent": (650, 2400, 25),
    "savings": (1500, 24000, 100),
    "loan": (3000, 42000, 250),
    "mba": (18000, 64000, 500),
    "renovation": (7000, 36000, 250),
}
_N_RANGES: dict[str, tuple[int, int]] = {
    "flight": (3, 38),
    "concert": (2, 4),
    "commute": (14, 75),
    "ten_k": (39, 66),
    "plants": (6, 41),
}


def _check_index(field: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{field}: expected a non-negative integer, got {value!r}")
    return int(value)


class _Draws:
    """Uniform draws from one Generator, fetched in blocks (cheap per call, deterministic)."""

    __slots__ = ("_rng", "_buf", "_i")

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._buf: list[float] = []
        self._i = 0

    def u(self) -> float:
        if self._i >= len(self._buf):
            self._buf = self._rng.random(512).tolist()
            self._i = 0
        x = self._buf[self._i]
        self._i += 1
        return x

    def block(self, k: int) -> list[float]:
        """The next k uniforms at once (same stream as :meth:`u`)."""
        if self._i + k > len(self._buf):
            self._buf = self._buf[self._i :] + self._rng.random(max(512, k)).tolist()
            self._i = 0
        out = self._buf[self._i : self._i + k]
        self._i += k
        return out

    def below(self, n: int) -> int:
        return min(int(self.u() * n), n - 1)

    def between(self, lo: int, hi: int) -> int:
        """Uniform integer in [lo, hi]."""
        return lo + self.below(hi - lo + 1)

    def pick(self, seq: Sequence[Any]) -> Any:
        return seq[self.below(len(seq))]

    def chance(self, p: float) -> bool:
        return self.u() < p

    def sample(self, seq: Sequence[Any], k: int) -> list[Any]:
        """k distinct items (partial Fisher–Yates), in draw order."""
        pool = list(seq)
        k = min(k, len(pool))
        for i in range(k):
            j = i + self.below(len(pool) - i)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]


def _article(phrase: str) -> str:
    """``a``/``an`` + phrase (by the first letter; 'UX' reads as 'you')."""
    return ("an " if phrase[0].lower() in "aeio" else "a ") + phrase


def _fmt_money(symbol: str, amount: int) -> str:
    return f"{symbol}{amount:,}"


class _Builder:
    """Builds one persona's suite; every random choice goes through ``self.r``."""

    def __init__(self, persona_index: int, seed: int) -> None:
        self.index = persona_index
        self.seed = seed
        self.r = _Draws(np.random.default_rng([seed, persona_index]))
        self.facts: list[dict[str, Any]] = []
        self.n_core = 0
        self.n_annot = 0
        # session -> list of (user text, tag); tags name turns that questions reference
        self.specials: dict[int, list[tuple[str, tuple | None]]] = {}
        self.topic_of: dict[int, str] = {}
        self.tag_turns: dict[tuple, list[str]] = {}
        self.fact_turn: dict[str, tuple] = {}
        self.questions: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ identity and time
    def identity(self) -> None:
        r = self.r
        self.first = r.pick(V.FIRST_NAMES)
        self.last = r.pick(V.LAST_NAMES)
        self.key = f"{self.first.lower()}{self.index:04d}"
        prof, sib_prof = r.sample(V.PROFESSIONS, 2)
        city, city2 = r.sample(V.CITIES, 2)
        self.money = r.pick(("€", "£", "$"))
        sib_rel = r.pick(("older sister", "younger sister", "older brother", "younger brother"))
        self.ctx: dict[str, str] = {
            "first": self.first,
            "prof": prof,
            "a_prof": _article(prof),
            "hometown": r.pick(V.HOMETOWNS),
            "sib": r.pick(V.SISTER_NAMES if sib_rel.endswith("sister") else V.BROTHER_NAMES),
            "sib_rel": sib_rel,
            "a_sib_rel": _article(sib_rel),
            "sib_prof": sib_prof,
            "a_sib_prof": _article(sib_prof),
            "partner": r.pick(V.PARTNER_NAMES),
            "pet": r.pick(V.PET_KINDS),
            "petname": r.pick(V.PET_NAMES),
            "city": city,
            "city2": city2,
            "field": r.pick(V.FIELDS),
            "university": r.pick(V.UNIVERSITIES),
            "language": r.pick(V.LANGUAGES),
            "condition": r.pick(V.CONDITIONS),
            "age": str(r.between(6, 31)),
            "n": str(r.between(2, 6)),
        }

    def timeline(self) -> None:
        r = self.r
        day = _dt.date(2024, 9, 2) + _dt.timedelta(days=r.between(0, 150))
        self.dates = {1: day}
        for s in range(2, N_SESSIONS + 1):
            day = day + _dt.timedelta(days=r.between(11, 19))
            self.dates[s] = day
        self.asked_at = self.dates[N_SESSIONS]
        # session 1 is critical; one critical session in each pair (2,3) … (32,33); 34 maybe
        crit = {1} | {2 * k + r.below(2) for k in range(1, 17)}
        if r.chance(0.4):
            crit.add(34)
        self.critical = sorted(crit)
        self.filler = [s for s in range(1, N_SESSIONS + 1) if s not in crit]
        topics = list(V.FILLER_TOPICS)
        for s in self.filler:
            self.topic_of[s] = r.pick(topics)

    def place(self, lo: int, hi: int) -> int:
        """A random critical session in [lo, hi] (every window of width ≥ 2 in 1..33 has one)."""
        options = [s for s in self.critical if lo <= s <= hi]
        return self.r.pick(options)

    def fillers_between(self, lo: int, hi: int) -> list[int]:
        """Filler sessions strictly between sessions lo and hi."""
        return [s for s in self.filler if lo < s < hi]

    # ------------------------------------------------------------------ facts and turns
    def cats(self, pair: tuple[str, str]) -> dict[str, float]:
        """Soft category weights: the primary alone, or a primary/secondary split."""
        if self.r.chance(0.6):
            return {pair[0]: 1.0}
        w = self.r.pick((0.7, 0.6, 0.8))
        return {pair[0]: w, pair[1]: round(1.0 - w, 10)}

    def fmt(self, template: str, **extra: str) -> str:
        return template.format_map({**self.ctx, **extra} if extra else self.ctx)

    def add_fact(
        self,
        text: str,
        categories: dict[str, float],
        slot: str | None,
        session: int,
        role: str,
        *,
        say: str,
        topic: str,
        event_time: str | None = None,
        confidence: float = 1.0,
        numeric: bool = False,
        links: dict[str, str] | None = None,
        annotated: bool = False,
    ) -> str:
        if annotated:
            self.n_annot += 1
            fid = f"{self.key}.a{self.n_annot:02d}"
        else:
            self.n_core += 1
            fid = f"{self.key}.f{self.n_core:02d}"
        fact = {
            "id": fid,
            "text": text,
            "categories": dict(categories),
            "slot": slot,
            "session": session,
            "said_at": self.dates[session].isoformat(),
            "event_time": event_time,
            "confidence": confidence,
            "numeric": numeric,
            "role": role,
            "links": dict(links or {}),
            "source": "generator",
        }
        self.facts.append(fact)
        tag = ("say", fid)
        self.fact_turn[fid] = tag
        self.specials.setdefault(session, []).append((say, tag))
        self.topic_of.setdefault(session, topic)
        return fid

    def inject(self, sessions: Sequence[int], text: str, tag: tuple | None) -> bool:
        """Put a user turn into one of the given filler sessions (no-op if there is none)."""
        if not sessions:
            return False
        self.specials.setdefault(self.r.pick(sessions), []).append((text, tag))
        return True

    def chatter(self, key: str) -> None:
        """1–2 hard distractors (question vocabulary, nothing about the persona) in fillers."""
        lines = V.CHATTER[key]
        for line in self.r.sample(lines, self.r.between(1, min(2, len(lines)))):
            self.inject(self.filler, line, None)

    # ------------------------------------------------------------------ components
    def slot_values(self, kind: V.SlotKind, k: int) -> list[str]:
        if kind.values == ("@company",):
            heads = self.r.sample(V.COMPANY_HEADS, k)
            return [f"{h} {self.r.pick(V.COMPANY_TAILS)}" for h in heads]
        if kind.values == ("@city",):
            taken = {self.ctx["city"], self.ctx["city2"]}
            return self.r.sample([c for c in V.CITIES if c not in taken], k)
        return self.r.sample(kind.values, k)

    def supersessions(self) -> None:
        r = self.r
        kinds = r.sample(V.SLOT_KINDS, 3)
        self.chains: list[dict[str, Any]] = []
        for i, kind in enumerate(kinds):
            n_versions = 3 if (i == 0 and r.chance(0.5)) else 2
            values = self.slot_values(kind, n_versions)
            windows = ((1, 8), (11, 19), (22, 31)) if n_versions == 3 else ((1, 12), (16, 31))
            sessions = [self.place(lo, hi) for lo, hi in windows]
            cats = self.cats(kind.categories)
            ids: list[str] = []
            for j, (value, s) in enumerate(zip(values, sessions)):
                if j == 0:
                    text, say = self.fmt(r.pick(kind.fact), v=value), self.fmt(r.pick(kind.say), v=value)
                    role, links = "superseded", {}
                else:
                    old = values[j - 1]
                    text = self.fmt(r.pick(kind.fact_new), v=value, old=old)
                    say = self.fmt(r.pick(kind.say_new), v=value, old=old)
                    role = "superseding" if j == n_versions - 1 else "superseded"
                    links = {"supersedes": ids[-1]}
                ids.append(self.add_fact(text, cats, kind.slot, s, role, say=say, topic=kind.topic, links=links))
            # old values restated in passing before they changed (wrong items)
            for j in range(n_versions - 1):
                between = self.fillers_between(sessions[j], sessions[j + 1])
                for p in (0.7, 0.3):
                    if r.chance(p):
                        pool = kind.restate_q if r.chance(0.5) else kind.restate
                        self.inject(between, self.fmt(r.pick(pool), v=values[j]), ("old", i))
            # the current value restated later (support)
            if r.chance(0.7):
                later = self.fillers_between(sessions[-1], N_SESSIONS + 1)
                self.inject(later, self.fmt(r.pick(kind.restate), v=values[-1]), ("cur", i))
            # hard distractors: the question's vocabulary, nothing about the persona
            for line in r.sample(kind.chatter, r.between(1, 2)):
                self.inject(self.filler, line, None)
            self.chains.append({"kind": kind, "values": values, "ids": ids, "sessions": sessions})

    def stable(self) -> None:
        self.stables: list[tuple[V.StableKind, str]] = []
        for kind in self.r.sample(V.STABLE_KINDS, 4):
            s = self.place(1, 30)
            fid = self.add_fact(
                self.fmt(self.r.pick(kind.fact)),
                self.cats(kind.categories),
                None,
                s,
                "stable",
                say=self.fmt(self.r.pick(kind.say)),
                topic=kind.topic,
                numeric=kind.numeric,
            )
            if self.r.chance(0.5):
                self.inject(
                    self.fillers_between(s, N_SESSIONS + 1), self.fmt(self.r.pick(kind.restate)), ("stable", fid)
                )
            self.stables.append((kind, fid))
            self.chatter(kind.key)

    def _event(self, kind: V.ExpiringKind, day: _dt.date) -> tuple[str, dict[str, str]]:
        minute = 30 if (kind.category == "LOGISTICAL_CONTEXT" and self.r.chance(0.5)) else 0
        hour = kind.hour
        stamp = _dt.datetime(day.year, day.month, day.day, hour, minute).isoformat()
        ampm = "am" if hour < 12 else "pm"
        clock = f"{(hour - 1) % 12 + 1}:{minute:02d} {ampm}"
        extra = {"when": f"{_MONTHS[day.month - 1]} {day.day}, {day.year}", "clock": clock}
        if kind.key in _N_RANGES:
            extra["n"] = str(self.r.between(*_N_RANGES[kind.key]))
        return stamp, extra

    def expiring(self) -> None:
        r = self.r
        n_past = 2 if r.chance(0.75) else 3
        n_up = 1 if r.chance(0.55) else 2
        kinds = r.sample(V.EXPIRING_KINDS, n_past + n_up)
        self.chatter("calendar")
        self.past: list[tuple[V.ExpiringKind, str]] = []
        self.upcoming: list[tuple[V.ExpiringKind, str]] = []
        for j, kind in enumerate(kinds):
            is_past = j < n_past
            s = self.place(2, 24) if is_past else self.place(24, 33)
            if is_past:
                day = self.dates[s] + _dt.timedelta(days=r.between(3, 45))
            else:
                day = self.asked_at + _dt.timedelta(days=r.between(2, 60))
            stamp, extra = self._event(kind, day)
            fid = self.add_fact(
                self.fmt(kind.fact, **extra),
                {kind.category: 1.0},
                None,
                s,
                "expiring",
                say=self.fmt(kind.say, **extra),
                topic=kind.topic,
                event_time=stamp,
                numeric=kind.numeric,
            )
            if is_past:
                self.past.append((kind, fid))
                if r.chance(0.4):  # mentioned again before it happened (stale by asked_at)
                    before = [f for f in self.fillers_between(s, N_SESSIONS + 1) if self.dates[f] < day]
                    self.inject(before, self.fmt(kind.pre, **extra), ("pre", fid))
            else:
                self.upcoming.append((kind, fid))

    def contradiction(self) -> None:
        kind = self.r.pick(V.CONTRADICTION_KINDS)
        cats = self.cats(kind.categories)
        s_old, s_new = self.place(2, 14), self.place(17, 32)
        old = self.add_fact(
            kind.old, cats, kind.slot, s_old, "contradicted", say=kind.say_old, topic=kind.topic, numeric=kind.numeric
        )
        new = self.add_fact(
            kind.new,
            cats,
            kind.slot,
            s_new,
            "contradicting",
            say=kind.say_new,
            topic=kind.topic,
            numeric=kind.numeric,
            links={"contradicts": old},
        )
        if self.r.chance(0.4):
            self.inject(self.fillers_between(s_old, s_new), f"random thought, but {kind.say_old}", ("contra_old", old))
        self.contra = (kind, old, new)
        self.chatter(kind.slot)

    def retraction(self) -> None:
        kind = self.r.pick(V.RETRACTION_KINDS)
        lo, hi = _AMOUNT_RANGES.get(kind.key, (1000, 9000, 100))[:2]
        step = _AMOUNT_RANGES.get(kind.key, (0, 0, 100))[2]
        amount = _fmt_money(self.money, self.r.between(lo // step, hi // step) * step)
        cats = self.cats(kind.categories)
        s_plan = self.place(3, 16)
        s_ret = self.place(s_plan + 3, min(s_plan + 14, 33))
        plan = self.add_fact(kind.plan, cats, None, s_plan, "retracted", say=kind.say_plan, topic=kind.topic)
        ret = self.add_fact(
            self.fmt(kind.retraction, amount=amount),
            cats,
            None,
            s_ret,
            "retraction",
            say=self.fmt(kind.say_retraction, amount=amount),
            topic=kind.topic,
            numeric=kind.numeric,
            links={"retracts": plan},
        )
        if self.r.chance(0.6):
            self.inject(self.fillers_between(s_plan, s_ret), kind.mention, ("plan", plan))
        self.retract = (kind, plan, ret, amount)
        self.chatter(kind.key)

    def tentative(self) -> None:
        used = {c["kind"].slot for c in self.chains}
        kind = self.r.pick([k for k in V.TENTATIVE_KINDS if k.blocks not in used])
        cats = self.cats(kind.categories)
        s_old, s_new = self.place(1, 10), self.place(18, 33)
        existing = self.add_fact(
            self.fmt(kind.existing),
            cats,
            kind.slot,
            s_old,
            "ambiguous_existing",
            say=self.fmt(kind.say_existing),
            topic=kind.topic,
        )
        tent = self.add_fact(
            self.fmt(kind.tentative),
            cats,
            kind.slot,
            s_new,
            "tentative",
            say=self.fmt(kind.say_tentative),
            topic=kind.topic,
            confidence=0.4,
            links={"tentative_for": existing},
        )
        if self.r.chance(0.3):
            self.inject(
                self.fillers_between(s_new, N_SESSIONS + 1),
                "still going back and forth on this one: " + self.fmt(kind.say_tentative),
                ("tent", tent),
            )
        self.tent = (kind, existing, tent)
        self.chatter(kind.slot)

    def details(self) -> None:
        r = self.r
        self.numeric_details: list[tuple[V.DetailKind, str, str]] = []
        for kind in r.sample(V.NUMERIC_DETAILS, r.between(1, 2)):
            if kind.key in _AMOUNT_RANGES:
                lo, hi, step = _AMOUNT_RANGES[kind.key]
                value = _fmt_money(self.money, r.between(lo // step, hi // step) * step)
                extra = {"amount": value}
            else:
                value = str(r.between(*_N_RANGES[kind.key]))
                extra = {"n": value}
            fid = self.add_fact(
                self.fmt(kind.fact, **extra),
                self.cats(kind.categories),
                None,
                self.place(2, 32),
                "annotated",
                say=self.fmt(kind.say, **extra),
                topic="money and numbers",
                numeric=True,
                annotated=True,
            )
            self.numeric_details.append((kind, fid, self.fmt(kind.answer, **extra)))
            self.chatter(kind.key)
        self.hobbies: list[tuple[V.DetailKind, str]] = []
        self.chatter("free_time")
        for kind in r.sample(V.HOBBY_DETAILS, 2):
            fid = self.add_fact(
                kind.fact,
                self.cats(kind.categories),
                None,
                self.place(1, 20),
                "annotated",
                say=kind.say,
                topic="weekend plans",
                annotated=True,
            )
            for line in r.sample(V.HOBBY_MENTIONS[kind.key], r.between(1, 2)):
                self.inject(self.filler, line, ("hobby", fid))
            self.hobbies.append((kind, fid))

    # ------------------------------------------------------------------ turns
    def turns(self) -> list[dict[str, Any]]:
        r = self.r
        key = self.key
        out: list[dict[str, Any]] = []
        n_asst, n_follow = len(V.ASSISTANT_LINES), len(V.FOLLOW_UPS)
        for s in range(1, N_SESSIONS + 1):
            specials = self.specials.get(s, [])
            n_user = max(r.between(7, 10), len(specials) + 1)
            slots: list[tuple[str, tuple | None] | None] = [None] * n_user
            for special, pos in zip(specials, r.sample(range(1, n_user), len(specials))):
                slots[pos] = special
            if s in self.critical:
                topic = self.topic_of.setdefault(s, "catching up")
                lines = [self.fmt(r.pick(V.CRITICAL_OPENERS), topic=topic)]
            else:
                lines = r.sample(V.FILLER_TOPICS[self.topic_of[s]], 4)
            lines.reverse()
            draws = r.block(2 * n_user)
            said_at = self.dates[s].isoformat()
            prefix = f"{key}.s{s:02d}.t"
            for k, slot in enumerate(slots):
                if slot is None:
                    text = lines.pop() if lines else V.FOLLOW_UPS[int(draws[2 * k] * n_follow)]
                else:
                    text, tag = slot
                    if tag is not None:
                        self.tag_turns.setdefault(tag, []).append(f"{prefix}{2 * k + 1:02d}")
                out.append(
                    {"id": f"{prefix}{2 * k + 1:02d}", "session": s, "said_at": said_at, "role": "user", "text": text}
                )
                out.append(
                    {
                        "id": f"{prefix}{2 * k + 2:02d}",
                        "session": s,
                        "said_at": said_at,
                        "role": "assistant",
                        "text": V.ASSISTANT_LINES[int(draws[2 * k + 1] * n_asst)],
                    }
                )
        return out

    def tagged(self, *tags: tuple) -> list[str]:
        return [t for tag in tags for t in self.tag_turns.get(tag, [])]

    # ------------------------------------------------------------------ questions
    def ask(
        self,
        av: str,
        text: str,
        intent: str,
        categories: Iterable[str],
        answer: str,
        indicators: Sequence[str],
        support: Sequence[str],
        wrong: Sequence[str],
        notes: str,
    ) -> None:
        self.questions.append(
            {
                "text": text,
                "asked_at": self.asked_at.isoformat(),
                "attack_vector": av,
                "relevant_categories": list(dict.fromkeys(categories)),
                "correct_answer": answer,
                "wrong_answer_indicators": list(indicators),
                "intent": intent,
                "support": list(support),
                "wrong": list(wrong),
                "notes": notes,
                "conflict": False,
            }
        )

    def chain_question(self, av: str, i: int) -> None:
        c = self.chains[i]
        kind, values, ids = c["kind"], c["values"], c["ids"]
        cur, old = self.tagged(("cur", i)), self.tagged(("old", i))
        self.ask(
            av,
            self.fmt(self.r.pick(kind.question)),
            "current",
            kind.categories,
            self.fmt(kind.answer, v=values[-1], old=values[-2]),
            values[:-1],
            [ids[-1], *cur],
            [*ids[:-1], *old],
            f"generated: {len(ids)} versions of slot {kind.slot}; {len(old)} filler "
            f"turn(s) restate an old value, {len(cur)} the current one",
        )

    def build_questions(self) -> None:
        r = self.r
        # AV4 on the first chain (the one that may have three versions), AV1 on the others
        self.chain_question("AV4_multi_version_fact", 0)
        for i in (1, 2):
            self.chain_question("AV1_superseded_preference", i)
        # AV2: upcoming items vs expired ones; sometimes the historical view too
        logi = ("LOGISTICAL_CONTEXT", "OBLIGATIONS")
        past_ids = [f for _, f in self.past]
        pre = self.tagged(*(("pre", f) for f in past_ids))
        self.ask(
            "AV2_expired_logistics",
            self.fmt(r.pick(V.UPCOMING_QUESTIONS)),
            "upcoming",
            logi,
            "; ".join(self.fact_text(f) for _, f in self.upcoming),
            [k.key.replace("_", " ") for k, _ in self.past],
            [f for _, f in self.upcoming],
            [*past_ids, *pre],
            "generated: upcoming items at asked_at are support; expired items and pre-event mentions of them are wrong",
        )
        if r.chance(0.75):
            self.ask(
                "AV2_expired_logistics",
                self.fmt(r.pick(V.PAST_QUESTIONS)),
                "historical",
                logi,
                "; ".join(self.fact_text(f) for f in past_ids),
                [],
                past_ids,
                [],
                "generated: events already past at asked_at",
            )
        if len(self.upcoming) == 2 and r.chance(0.5):
            kind, fid = self.upcoming[1]
            self.ask(
                "AV2_expired_logistics",
                self.fmt(r.pick(V.UPCOMING_QUESTIONS)),
                "upcoming",
                logi,
                self.fact_text(fid),
                [k.key.replace("_", " ") for k, _ in self.past],
                [f for _, f in self.upcoming],
                past_ids,
                "generated: second view of the upcoming items",
            )
        # AV3: stable identity, single facts and sometimes a broad background question
        n_av3 = r.pick((2, 3, 3, 3, 4))
        pairs = r.sample(self.stables, n_av3)
        if n_av3 >= 3 and r.chance(0.3):
            (k1, f1), (k2, f2) = pairs[0], pairs[1]
            self.ask(
                "AV3_stable_identity",
                f"What should I know about {self.first}'s background?",
                "broad",
                [k1.categories[0], k2.categories[0]],
                f"{self.fmt(k1.answer)}; {self.fmt(k2.answer)}",
                [],
                [f1, f2, *self.tagged(("stable", f1), ("stable", f2))],
                [],
                "generated: two stable identity facts",
            )
            pairs = pairs[2:]
        for kind, fid in pairs:
            self.ask(
                "AV3_stable_identity",
                self.fmt(r.pick(kind.question)),
                "current",
                kind.categories[:1] if r.chance(0.5) else kind.categories,
                self.fmt(kind.answer),
                [],
                [fid, *self.tagged(("stable", fid))],
                [],
                f"generated: stable fact ({kind.key})",
            )
        # AV5: broad query over free time
        hobby_chains = [(i, c) for i, c in enumerate(self.chains) if c["kind"].hobby]
        support = [f for _, f in self.hobbies] + [c["ids"][-1] for _, c in hobby_chains]
        support += self.tagged(*(("hobby", f) for _, f in self.hobbies))
        support += self.tagged(*(("cur", i) for i, _ in hobby_chains))
        wrong = [f for _, c in hobby_chains for f in c["ids"][:-1]]
        wrong += self.tagged(*(("old", i) for i, _ in hobby_chains))
        answer = [k.answer for k, _ in self.hobbies] + [c["values"][-1] for _, c in hobby_chains]
        self.ask(
            "AV5_broad_query",
            self.fmt(r.pick(V.BROAD_QUESTIONS)),
            "broad",
            ("HOBBIES_RECREATION", "INTELLECTUAL_INTERESTS"),
            "; ".join(answer),
            [v for _, c in hobby_chains for v in c["values"][:-1]],
            support,
            wrong,
            "generated: current free-time activities; dropped ones are wrong",
        )
        # AV6: cross-session contradiction, the later statement holds
        kind, old, new = self.contra
        self.ask(
            "AV6_cross_session_contradiction",
            self.fmt(r.pick(kind.question)),
            "current",
            kind.categories,
            kind.answer,
            [kind.indicator],
            [new],
            [old, *self.tagged(("contra_old", old))],
            "generated: the later statement contradicts the earlier one",
        )
        # AV7: retraction-aware
        rkind, plan, ret, amount = self.retract
        self.ask(
            "AV7_selective_forgetting",
            self.fmt(r.pick(rkind.question)),
            "retraction_aware",
            rkind.categories,
            rkind.answer,
            [rkind.indicator],
            [ret],
            [plan, *self.tagged(("plan", plan))],
            "generated: the plan was withdrawn; the retraction statement is support",
        )
        # AV8: numbers that must survive
        n_num = r.pick((0, 1, 1, 1, 1, 2))
        for nkind, fid, ans in self.numeric_details[:n_num]:
            self.ask(
                "AV8_numeric_preservation",
                self.fmt(nkind.question),
                "current",
                nkind.categories[:1],
                ans,
                [],
                [fid],
                [],
                f"generated: numeric detail ({nkind.key})",
            )
        if rkind.numeric and r.chance(0.5):
            self.ask(
                "AV8_numeric_preservation",
                self.fmt(rkind.numeric_question),
                "historical",
                rkind.categories[:1],
                self.fmt(rkind.numeric_answer, amount=amount),
                [],
                [ret],
                [],
                "generated: the number lives in the retraction statement",
            )
        # AV9: soft supersession, both values are support
        tkind, existing, tent = self.tent
        self.ask(
            "AV9_soft_supersession",
            self.fmt(r.pick(tkind.question)),
            "current",
            tkind.categories,
            self.fmt(tkind.answer),
            [],
            [existing, tent, *self.tagged(("tent", tent))],
            [],
            "generated: tentative alternative (confidence 0.4) beside the existing value",
        )
        order = r.sample(range(len(self.questions)), len(self.questions))
        self.questions = [self.questions[j] for j in order]
        for n, q in enumerate(self.questions, start=1):
            q["id"] = f"{self.key}_q{n:02d}"

    def fact_text(self, fid: str) -> str:
        return next(f["text"] for f in self.facts if f["id"] == fid)

    # ------------------------------------------------------------------ assemble
    def build(self) -> dict[str, Any]:
        self.identity()
        self.timeline()
        self.stable()
        self.supersessions()
        self.expiring()
        self.contradiction()
        self.retraction()
        self.tentative()
        self.details()
        turns = self.turns()
        for fact in self.facts:
            if fact["role"] == "annotated":
                fact["evidence"] = self.tagged(self.fact_turn[fact["id"]])
        self.build_questions()
        sessions = [
            {
                "id": s,
                "date": self.dates[s].isoformat(),
                "type": "critical" if s in self.critical else "filler",
                "topic": self.topic_of[s],
            }
            for s in range(1, N_SESSIONS + 1)
        ]
        facts = sorted(self.facts, key=lambda f: (f["id"].rsplit(".", 1)[1][0] == "a", f["id"]))
        return {
            "suite": "generated",
            "version": 1,
            "persona": self.key,
            "name": f"{self.first} {self.last}",
            "source": f"frcore.bench generator v{GENERATOR_VERSION}",
            "seed": self.seed,
            "persona_index": self.index,
            "asked_at": self.asked_at.isoformat(),
            "sessions": sessions,
            "facts": facts,
            "turns": turns,
            "questions": self.questions,
        }


def _check_vocab() -> None:
    """Every category named in the vocabulary is canonical, every kind has chatter lines and a numeric
    detail uses ``{amount}`` only where it is filled (fails at import, not mid-run; ``_vocab`` has
    checked the rest of the file as it loaded)."""
    categorised: tuple[
        V.SlotKind | V.StableKind | V.ContradictionKind | V.RetractionKind | V.TentativeKind | V.DetailKind, ...
    ] = (
        *V.SLOT_KINDS,
        *V.STABLE_KINDS,
        *V.CONTRADICTION_KINDS,
        *V.RETRACTION_KINDS,
        *V.TENTATIVE_KINDS,
        *V.NUMERIC_DETAILS,
        *V.HOBBY_DETAILS,
    )
    pairs = [k.categories for k in categorised]
    pairs += [(k.category, k.category) for k in V.EXPIRING_KINDS]
    keyed: tuple[V.StableKind | V.RetractionKind | V.DetailKind, ...] = (
        *V.STABLE_KINDS,
        *V.RETRACTION_KINDS,
        *V.NUMERIC_DETAILS,
    )
    slotted: tuple[V.ContradictionKind | V.TentativeKind, ...] = (*V.CONTRADICTION_KINDS, *V.TENTATIVE_KINDS)
    keys = {k.key for k in keyed}
    keys |= {k.slot for k in slotted}
    missing = (keys | {"calendar", "free_time"}) - set(V.CHATTER)
    if missing:
        raise ValueError(f"vocabulary: no CHATTER lines for {sorted(missing)}")
    for pair in pairs:
        for name in pair:
            if name not in CATEGORY_NAMES:
                raise ValueError(f"vocabulary: unknown category {name!r}")
    for kind in V.NUMERIC_DETAILS:  # {amount} is filled only for the kinds with an amount range
        templates = (kind.fact, kind.say, kind.answer)
        if kind.key not in _AMOUNT_RANGES and any("amount" in V.template_fields(t) for t in templates):
            raise ValueError(f"vocabulary: numeric detail {kind.key!r} uses {{amount}} but has no amount range")


_check_vocab()


def generate_suite(persona_index: int, seed: int = 0) -> dict[str, Any]:
    """One persona in suite format v1, a JSON-able dict, fully determined by
    ``(seed, persona_index)`` via ``numpy.random.default_rng([seed, persona_index])``.

    Args:
        persona_index: non-negative persona number (part of the persona key and the ids).
        seed: non-negative suite seed.

    Returns:
        ``{suite, version, persona, name, source, seed, persona_index, asked_at, sessions,
        facts, turns, questions}`` as in SPEC §5.

    Raises:
        ValueError: ``persona_index`` or ``seed`` is not a non-negative integer.
    """
    return _Builder(_check_index("persona_index", persona_index), _check_index("seed", seed)).build()


def generate_suites(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """Personas ``0 … n-1`` for one seed (each independent of the others)."""
    n = _check_index("n", n)
    seed = _check_index("seed", seed)
    return [generate_suite(i, seed) for i in range(n)]


def write_suites(folder: str | os.PathLike[str], n: int, seed: int = 0) -> list[Path]:
    """Write personas ``0 … n-1`` as ``<folder>/<persona>.json`` (UTF-8, stable key order);
    creates the folder; returns the paths in persona order."""
    n = _check_index("n", n)
    seed = _check_index("seed", seed)
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        suite = generate_suite(i, seed)
        path = out / f"{suite['persona']}.json"
        path.write_text(json.dumps(suite, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


# --------------------------------------------------------------------------- lexical statistic

#: Function words ignored when comparing questions with facts.
STOPWORDS: frozenset[str] = frozenset(
    """
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each else ever few for from
further had has have having he her here hers herself him himself his how i if in into is it its
itself just least let like may me might more most much must my myself no nor not now of off on
once only or other our ours ourselves out over own same shall she should so some such than that
the their theirs them themselves then there these they this those through to too under until up
upon very was we were what when where which while who whom whose why will with would you your
yours yourself yourselves s t don doesn isn re ve ll d m o y
""".split()
)

_WORD = re.compile(r"[a-z0-9]+")


def content_words(text: str) -> frozenset[str]:
    """Lower-cased alphanumeric tokens minus :data:`STOPWORDS`, possessive ``'s`` dropped and a
    plural ``s`` stripped from words longer than three letters (``meals`` → ``meal``)."""
    words = set()
    for w in _WORD.findall(text.lower().replace("'s", " ").replace("’s", " ")):
        if w in STOPWORDS:
            continue
        if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        words.add(w)
    return frozenset(words)


def lexical_overlap_stats(suites: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Share of questions whose support shares no content word with the question text.

    ``disjoint_facts``: no support *fact* shares a content word with the question (questions
    with no support fact are not counted); ``disjoint_support``: the same over every support
    item, facts and turns. Also ``wrong_closer``: share of questions with a wrong item that
    shares more content words with the question than every support item does.
    """
    n_fact_q = disjoint_facts = n_q = disjoint_all = closer = 0
    for suite in suites:
        items = {f["id"]: f["text"] for f in suite["facts"]}
        items.update({t["id"]: t["text"] for t in suite["turns"]})
        fact_ids = {f["id"] for f in suite["facts"]}
        for q in suite["questions"]:
            qw = content_words(q["text"])
            overlaps = {i: len(qw & content_words(items[i])) for i in q["support"]}
            n_q += 1
            disjoint_all += all(v == 0 for v in overlaps.values())
            fact_overlaps = [v for i, v in overlaps.items() if i in fact_ids]
            if fact_overlaps:
                n_fact_q += 1
                disjoint_facts += all(v == 0 for v in fact_overlaps)
            best_support = max(overlaps.values(), default=0)
            closer += any(len(qw & content_words(items[i])) > best_support for i in q["wrong"])
    return {
        "questions": float(n_q),
        "disjoint_facts": disjoint_facts / n_fact_q if n_fact_q else 0.0,
        "disjoint_support": disjoint_all / n_q if n_q else 0.0,
        "wrong_closer": closer / n_q if n_q else 0.0,
    }
