"""Query understanding: intent and category routing, rule-based and inspectable.

Both are plain functions of the query text (no benchmark names or question strings appear in
any rule), and both are overridable by the caller. Every decision returns the rule that fired,
so ``fr bank explain`` can show why a query got its intent and routing.

Intent (SPEC §3): ``historical`` ("used to", "before switching", "previous", "past ... events"),
``change_history`` ("how has ... changed", "over time", "history of"), ``upcoming``
("upcoming", "coming up", "deadline", "scheduled", "next week"), ``retraction_aware``
("still planning", "decided against", "changed ... mind", "any longer"), ``broad``
("tell me about", "background", "outside (of) work", "free time", "what should I know"),
otherwise ``current``. Rules are tried in that order; the first match wins.

Routing: each category has a prototype — a short description and a keyword list (word stems).
A query's routing weight for a category is a blend of its keyword-hit share and (when an embedder
is given) the cosine between the query and the category's prototype description, rescaled so
the best category has weight 1; up to 5 categories scoring ≥ 0.15 are kept (SPEC §4).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from .._ontology import CATEGORY_NAMES, N_CATEGORIES
from .._types import INTENT_NAMES

# ----------------------------------------------------------------------------- intent rules

#: (intent, rule name, compiled pattern); order matters — the first match wins.
INTENT_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (intent, name, re.compile(pattern, re.IGNORECASE))
    for intent, name, pattern in (
        ("change_history", "how-changed", r"\bhow (has|have|did) .{0,60}\b(chang|evolv|develop|shift)"),
        ("change_history", "over-time", r"\b(over time|over the (years|months)|history of|timeline|all the (jobs|places|cities|homes|roles))\b"),
        ("historical", "used-to", r"\b(used to|did \w+ use to)\b"),
        ("historical", "before-switching", r"\bbefore (switching|moving|changing|starting|quitting|leaving|the (switch|move|change))\b"),
        ("historical", "past-marker", r"\b(previous(ly)?|former(ly)?|originally|in the past|past|expired|earlier|old|prior|would have|had been|back when|anymore than)\b"),
        ("upcoming", "upcoming", r"\b(upcoming|coming up|in the coming|next (week|month|year|few)|scheduled|deadlines?|registered for|signed up for|due (date|soon)|agenda|on the calendar|appointments?)\b"),
        ("upcoming", "future-plan", r"\b(will|going to) (be )?(attend|travel|fly|visit|have)\b"),
        ("retraction_aware", "still-planning", r"\bstill (planning|going|thinking|considering|pursuing|intending|hoping|set on)\b"),
        ("retraction_aware", "changed-mind", r"\b(decided (against|not)|chang(ed|ing) (his|her|their|my|your) mind|called off|gave up on|any ?longer|backed out|dropped the idea)\b"),
        ("retraction_aware", "pursuing", r"\b(is|are) .{1,40}\b(pursuing|planning to|thinking (of|about)|considering)\b"),
        ("broad", "tell-me-about", r"\b(tell me (about|everything)|what (do|should) (you|i|we) know|overview|summar(y|ise|ize)|describe)\b"),
        ("broad", "background", r"\b(background|outside (of )?(work|teaching|the office|school|job)|free time|spare time|for fun|hobbies|stress relief|family (situation|background))\b"),
    )
)


@dataclass(frozen=True)
class IntentDecision:
    intent: str
    rule: str  # name of the rule that fired, "default" or "given"


#: every rule's pattern in one alternation: no match there means no rule matches (one scan
#: instead of twelve for the default intent); which rule fires is still decided in order
_ANY_RULE = re.compile("|".join(f"(?:{p.pattern})" for _, _, p in INTENT_RULES), re.IGNORECASE)


def infer_intent(text: str) -> IntentDecision:
    """Intent of a query by the first matching rule of :data:`INTENT_RULES` (default ``current``)."""
    if not _ANY_RULE.search(text):
        return IntentDecision("current", "default")
    for intent, name, pattern in INTENT_RULES:
        if pattern.search(text):
            return IntentDecision(intent, name)
    return IntentDecision("current", "default")


# ----------------------------------------------------------------------------- routing

#: Category prototypes: a description (for embedding similarity) and keyword stems (prefix match).
CATEGORY_PROTOTYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "IDENTITY_SELF_CONCEPT": (
        "who the person is: name, age, nationality, heritage, religion, profession, where they come from, personality and values",
        ("identity", "name", "age", "born", "birth", "heritage", "ethnic", "nationalit", "religio", "faith", "spiritual", "background",
         "origin", "from", "grew", "raised", "hometown", "personality", "values", "profession", "career", "job", "work", "employ",
         "occupation", "degree", "educat", "school", "college", "universit", "graduat", "style", "learning", "language", "speak", "live", "lives", "city"),
    ),
    "RELATIONAL_BONDS": (
        "family, partner, spouse, children, parents, siblings, friends, pets and relationships",
        ("family", "partner", "spouse", "wife", "husband", "boyfriend", "girlfriend", "married", "wedding", "child", "kid", "son", "daughter",
         "mother", "father", "mom", "dad", "parent", "brother", "sister", "sibling", "friend", "relationship", "dating", "pet", "dog", "cat",
         "grand", "cousin", "uncle", "aunt", "roommate", "neighbo"),
    ),
    "INTELLECTUAL_INTERESTS": (
        "intellectual interests: topics they study, read or research, books, learning, courses, ideas",
        ("read", "book", "learn", "study", "studi", "research", "course", "class", "interest", "curious", "topic", "philosoph", "science",
         "history", "podcast", "language", "certif", "qualif", "degree", "master", "phd", "education", "lecture"),
    ),
    "HEALTH_WELLBEING": (
        "health, medical conditions, diagnoses, medication, diet restrictions, fitness, sleep, mental wellbeing",
        ("health", "medical", "doctor", "diagnos", "condition", "illness", "disease", "allerg", "medic", "therap", "pain", "injur", "surgery",
         "sleep", "anxiety", "stress", "mental", "diet", "vegetarian", "vegan", "weight", "fitness", "exercise", "workout", "gym", "run",
         "yoga", "migraine", "pregnan", "symptom", "wellbeing", "wellness"),
    ),
    "PROJECTS_ENDEAVORS": (
        "projects and endeavors: work projects, side businesses, startups, writing a book, building something, goals",
        ("project", "build", "launch", "startup", "business", "company", "product", "brand", "writing", "novel", "book", "app", "goal",
         "plan", "venture", "side", "portfolio", "thesis", "research", "promotion", "team", "client", "pursu"),
    ),
    "HOBBIES_RECREATION": (
        "hobbies and recreation: sports, games, music, cooking, travel for fun, crafts, outdoor activities",
        ("hobb", "fun", "free", "spare", "weekend", "sport", "game", "play", "music", "guitar", "piano", "sing", "paint", "draw", "craft",
         "cook", "bake", "garden", "hik", "climb", "swim", "cycl", "bike", "run", "race", "marathon", "fish", "camp", "photograph",
         "danc", "knit", "travel", "outside", "relax", "leisure", "club"),
    ),
    "PREFERENCES_HABITS": (
        "preferences and habits: favorite foods, drinks, routines, likes and dislikes, diet, daily habits",
        ("prefer", "favorite", "favourite", "like", "love", "hate", "dislike", "enjoy", "habit", "routine", "usually", "always", "never",
         "daily", "morning", "coffee", "tea", "food", "eat", "drink", "diet", "restaurant", "style", "wear", "music", "tool", "use", "uses"),
    ),
    "FINANCIAL_MATERIAL": (
        "money and possessions: salary, savings, debt, rent, mortgage, budget, car, house, costs and prices",
        ("money", "salary", "income", "earn", "pay", "paid", "cost", "price", "budget", "saving", "debt", "loan", "mortgage", "rent",
         "invest", "stock", "financ", "bank", "afford", "expens", "car", "vehicle", "house", "home", "apartment", "own", "bought", "buy",
         "sell", "sold", "dollar", "$", "£", "€", "much", "worth", "tuition", "fee", "mile"),
    ),
    "OBLIGATIONS": (
        "obligations and commitments: deadlines, exams, reviews, appointments, duties, promises, due dates",
        ("deadline", "due", "exam", "test", "review", "appointment", "commit", "oblig", "duty", "promise", "submit", "submission", "meeting",
         "interview", "renew", "contract", "assignment", "report", "tax", "bill", "court", "jury", "certif", "registration", "register"),
    ),
    "LOGISTICAL_CONTEXT": (
        "logistics: upcoming trips, flights, travel dates, events, schedules, reservations, moving dates, where and when",
        ("trip", "flight", "fly", "travel", "visit", "event", "schedul", "calendar", "reserv", "booking", "book", "ticket", "hotel",
         "conference", "wedding", "party", "concert", "move", "moving", "lease", "week", "weekend", "tomorrow", "date", "upcoming",
         "coming", "next", "when", "where", "commute", "appointment"),
    ),
    "OTHER": (
        "other facts that fit no category",
        (),
    ),
}

_WORD = re.compile(r"[a-z0-9$£€]+")
ROUTING_MIN_SCORE = 0.15
ROUTING_MAX_CATEGORIES = 5
#: Our choice: share of the routing score from keyword hits vs prototype-embedding similarity.
KEYWORD_SHARE = 0.5
_OTHER = CATEGORY_NAMES.index("OTHER")


@functools.lru_cache(maxsize=65536)
def _word_hits(word: str) -> tuple[int, ...]:
    """Categories whose keyword stems prefix ``word`` (memoised: words repeat across queries)."""
    return tuple(c for c, name in enumerate(CATEGORY_NAMES) if any(word.startswith(s) for s in CATEGORY_PROTOTYPES[name][1]))


def _keyword_counts(text: str) -> list[int]:
    """Per category, the number of words of ``text`` that start with one of its stems."""
    counts = [0] * N_CATEGORIES
    for w in _WORD.findall(text.lower()):
        for c in _word_hits(w):
            counts[c] += 1
    return counts


@dataclass(frozen=True)
class Routing:
    """Routing weights r (C,) in [0, 1] and the raw evidence behind them."""

    weights: np.ndarray
    keyword_hits: np.ndarray
    prototype_sim: np.ndarray | None = None
    given: bool = False

    def as_dict(self) -> dict[str, float]:
        return {CATEGORY_NAMES[c]: w for c, w in enumerate(np.asarray(self.weights, dtype=np.float64).tolist()) if w > 0}

    @property
    def top(self) -> int | None:
        return int(np.argmax(self.weights)) if self.weights.max() > 0 else None


#: Softmax temperature of :meth:`Router.categorize`. Set so that the soft categories of raw
#: turns look like the paper's bank (SPEC §2: 2.0 categories per entry, 66.8% with primary
#: weight < 0.90): on LoCoMo's 5,882 turns with MiniLM, 0.1 gives 2.39 categories and 57.4%
#: below 0.90, the smallest summed squared relative error of the grid 0.05…0.25
#: (``python -m experiments.router_temperature``). It was 0.25 before (4.84 categories,
#: 94.3%: far softer than the paper's bank), a value chosen without measurement.
CATEGORIZE_TEMPERATURE = 0.1


class Router:
    """Category router over :data:`CATEGORY_PROTOTYPES` (optionally with an embedder)."""

    def __init__(self, embedder=None):
        self.embedder = embedder
        self._proto = None
        if embedder is not None:
            descs = [CATEGORY_PROTOTYPES[n][0] for n in CATEGORY_NAMES]
            self._proto = np.asarray(embedder.embed(descs), dtype=np.float64)

    def raw_scores(self, text: str, query_vec: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(raw routing score per category, keyword hits, prototype cosine or None).

        raw_c = KEYWORD_SHARE · hits_c / max(hits) + (1 − KEYWORD_SHARE) · (sim_c − min) / (max − min),
        OTHER's similarity excluded (non-finite similarities count 0). The eleven values are
        Python floats: the same IEEE double operations as the array form, fewer NumPy calls.
        """
        counts = _keyword_counts(text)
        hits = np.array(counts, dtype=np.float64)
        top = max(counts)
        kw = [h / top for h in counts] if top > 0 else [float(h) for h in counts]
        sim = None
        if self._proto is not None:
            v = np.asarray(query_vec if query_vec is not None else self.embedder.embed([text])[0], dtype=np.float64)
            sim = self._proto @ v
            sim[_OTHER] = -np.inf
            s = sim.tolist()
            lo = min(x for x in s if math.isfinite(x))  # ValueError when no similarity is finite
            hi = math.nan if any(x != x for x in s) else max(s)  # as np.max: NaN wins
            d = hi - lo + 1e-12
            sim_n = [(x - lo) / d if math.isfinite(x) else 0.0 for x in s]
            share = 1 - KEYWORD_SHARE
            raw = [KEYWORD_SHARE * a + share * b for a, b in zip(kw, sim_n)]
        else:
            raw = kw
        return np.array(raw, dtype=np.float64), hits, sim

    def route(self, text: str, query_vec: np.ndarray | None = None) -> Routing:
        """Routing weights for a query: rescaled to max 1, at most 5 categories ≥ 0.15 kept."""
        raw, hits, sim = self.raw_scores(text, query_vec)
        return Routing(_keep_top(raw), hits, sim)

    def categorize(self, text: str, vec: np.ndarray | None = None, temperature: float | None = None) -> dict[str, float]:
        """Soft category weights (summing to 1) for an untyped item such as a raw turn.

        Softmax over the routing scores with ``temperature`` (default
        :data:`CATEGORIZE_TEMPERATURE`); an item with no evidence at all is ``{"OTHER": 1.0}``.
        Weights below 0.05 are dropped and the rest renormalised.
        """
        if temperature is None:
            temperature = CATEGORIZE_TEMPERATURE
        raw, hits, _ = self.raw_scores(text, vec)
        if raw.max() <= 0:
            return {"OTHER": 1.0}
        z = np.exp((raw - raw.max()) / temperature)
        z[CATEGORY_NAMES.index("OTHER")] = 0.0
        p = z / z.sum()
        p = np.where(p >= 0.05, p, 0.0)
        p = p / p.sum()
        return {CATEGORY_NAMES[c]: float(round(w, 6)) for c, w in enumerate(p) if w > 0}


def _keep_top(raw) -> np.ndarray:
    """Routing weights from raw scores: rescaled so the best is 1; the top
    ROUTING_MAX_CATEGORIES (ties by category order) scoring ≥ ROUTING_MIN_SCORE kept, the rest 0."""
    r = raw.tolist() if isinstance(raw, np.ndarray) else list(raw)
    w = [0.0] * N_CATEGORIES
    top = max(r)
    if top <= 0 or any(x != x for x in r):  # none positive, or NaN (the array form keeps none)
        return np.zeros(N_CATEGORIES)
    scaled = [x / top for x in r]
    for c in sorted(range(N_CATEGORIES), key=lambda c: -scaled[c])[:ROUTING_MAX_CATEGORIES]:  # stable
        if scaled[c] >= ROUTING_MIN_SCORE:
            w[c] = scaled[c]
    return np.array(w, dtype=np.float64)


def routing_from_categories(categories: Sequence[str] | Mapping[str, float]) -> Routing:
    """Caller-given routing (names → weight, or a list of names with weight 1)."""
    w = np.zeros(N_CATEGORIES)
    items = categories.items() if isinstance(categories, Mapping) else ((c, 1.0) for c in categories)
    for name, value in items:
        if name not in CATEGORY_NAMES:
            raise ValueError(f"categories: unknown category {name!r}; expected one of {', '.join(CATEGORY_NAMES)}")
        value = float(value)
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"categories: weight {value} for {name} outside [0, 1]")
        w[CATEGORY_NAMES.index(name)] = value
    return Routing(w, np.zeros(N_CATEGORIES), None, given=True)


def check_intent(name: str) -> str:
    key = str(name).strip().lower()
    if key not in INTENT_NAMES:
        raise ValueError(f"intent: unknown intent {name!r}; expected one of {', '.join(INTENT_NAMES)}")
    return key
