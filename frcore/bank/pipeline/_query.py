"""Query understanding: intent and category routing, rule-based and inspectable.

Both are plain functions of the query text (no benchmark names or question strings appear in
any rule), and both are overridable by the caller. Every decision returns the rule that fired,
so ``fr bank explain`` can show why a query got its intent and routing.

Intent (SPEC §3): ``change_history`` ("how has ... changed", "what changed", "which cities have I
lived in", "over the past year"), ``historical`` ("used to", "before" with a past tense or at the
end of the question, "previously", "last year", "my old job"), ``upcoming`` ("before Friday",
"need to ... before", "next week", "when is my ...", "tomorrow"; not in a request for a
recommendation or advice, :data:`REQUEST_RULE`: "suggest a hotel for my upcoming trip"), ``retraction_aware`` ("still
planning", "still on", "decided against", "cancelled", "called off"), ``broad`` ("tell me about",
"what do you know about me", "free time", "my goals"), otherwise ``current``. The rules of
:data:`INTENT_RULES` are tried in order; the first match wins. docs/intents.md lists them with the
accuracy measured on the hand-written intent set (``python -m experiments.intent_eval``).

Routing: each category has a prototype — a short description and a keyword list (word stems).
A query's routing weight for a category is a blend of its keyword-hit share and (when an embedder
is given) the cosine between the query and the category's prototype description, rescaled so
the best category has weight 1; up to 5 categories scoring ≥ 0.15 are kept (SPEC §4).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..._ontology import CATEGORY_NAMES, N_CATEGORIES, primary_index
from ..._shown import shown
from ..._types import INTENT_NAMES

# ----------------------------------------------------------------------------- intent rules

#: who a query is about: the user in the first person, a third person, or "the user"
_WHO = r"(?:i|we|you|he|she|they|the user)"
_DAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|weekend)"
_THING = (
    r"(?:jobs?|roles?|(?:job )?titles?|places|cities|homes?|address(?:es)?|cars?|phones?|(?:phone )?numbers?|gyms?"
    r"|apartments?|flats?|houses?|employers?|companies|partners?|schools?|pets?|dogs?|cats?|bikes?|laptops?)"
)
_PERIOD = r"(?:years?|months?|weeks?|decades?|summer|winter|spring|autumn|fall)"

#: (intent, rule name, pattern) before compilation; order matters — the first match wins.
# fmt: off
_INTENT_RULE_SOURCE: tuple[tuple[str, str, str], ...] = (
    # change_history: the sequence of a slot's values, or what changed
    ("change_history", "how-changed",
     r"\bhow\b.{0,60}\b(has|have|did|had)\b.{0,60}"
     r"\b(chang(e|ed|es|ing)\b(?! (my|his|her|their|your|our) minds?)|evolv|develop|shift|improv|trend|progress"
     r"|(gone|go|went) (up|down))"),
    ("change_history", "what-changed",
     r"\bwhat('s| has| have)? (chang|been (chang|updat|different))|\bwhat('s| is| has been) (different|new)\b"
     r"|\b(what|which) (changes|updates|revisions)\b|\bwhat (did|have) " + _WHO + r" (chang|updat)"
     r"(?!\w* (my|his|her|their|your|our) minds?)|\b(was|were|has|have) there (been )?(a|any) changes?\b"),
    ("change_history", "has-changed",
     r"\b(has|have|did) (my|his|her|their|the user's|our) .{1,40}\b(chang(e|ed)|(gone|go|went) (up|down))\b"
     r"(?! (my|his|her|their|your|our) minds?)|\b(updates|revisions|changes) (to|in|of)\b|\b\w+ changes\b"
     r"|\bwhat('s| has)? been updated\b"),
    ("change_history", "over-time",
     r"\b(over time|over the (years|months)|history of|timeline|all the (jobs|places|cities|homes|roles))\b"
     r"|\b(employment|work|job|career|address|residential|dating|relationship|travel|housing|salary|pay) history\b"
     r"|\b(over|during|across|through|in) the (past|last) (\w+ )?" + _PERIOD + r"\b"
     r"|\b(progression|sequence|evolution|chronolog\w*|walk me through|before and after)\b"
     r"|\bin (chronological |date )?order[.?!]*\s*$|\bfrom\b.{1,40}\bto now\b|\bthen to now\b"
     r"|\bcompar(e|ed|ing)\b.{0,40}\b(previous|old|last|before|former|earlier|then|now|current|new)\b"
     r"|\bsince (we|i) last\b|\bsince last time\b"),
    ("change_history", "every-value",
     r"\b(all|every|each) (of )?(the |my |his |her |their |the user's )?(\w+ )?" + _THING + r"\b"
     r"|\b(all|every)\b.{0,40}\b(i've|i have|i ever|he's|she's|they've|has|have) (ever )?"
     r"(had|owned|lived|been|worked)\b"
     r"|\b(which|what) (\w+ ){1,2}(have|has) " + _WHO + r" (ever )?(owned|had|lived in|been (a )?member|gone through"
     r"|worked (at|for))|\bhow (many times|often) (\w+ ){0,2}(have|has|did) " + _WHO + r"\b"
     r"|\bhow many \w+ (have|has) " + _WHO + r" (had|owned|lived in|worked|moved|changed|been)\b"),
    ("change_history", "when-switched",
     r"\bwhen did " + _WHO + r" (switch|stop|quit|change|give up|move from|go from)\b|\bswitch(ed)? from\b"
     r"|\bfrom and to\b"),
    # historical: a superseded or expired value
    ("historical", "used-to", r"\b(used to|did (the user|\w+'s \w+|\w+) use to)\b"),
    ("upcoming", "before-deadline",
     r"\b(need|needs|have|has|got) to\b.{0,60}\bbefore\b|\bshould " + _WHO + r" (\w+ ){0,2}before\b"
     r"|\bbefore (\w+ ){0,3}(" + _DAY + r"|next|the end of|(it|my \w+|the \w+) (starts|begins)|leaving)\b"
     r"|\bdue before\b"),
    ("historical", "before-switching",
     r"\bbefore (switching|moving|changing|starting|quitting|leaving|the (switch|move|change))\b"),
    ("historical", "before-past",
     r"\b(did|was|were|had)\b.{0,60}\bbefore\b|\bbefore\b.{0,60}\b(did|was|were|had)\b"
     r"|\bbefore (" + _WHO + r"|the \w+|my \w+) (\w+ )?(\w+ed|went|became|began|got|took|came|left|quit|was|were|had)\b"
     r"|\bbefore (this|that) one\b|\b(have|has) " + _WHO + r" (\w+ ){1,3}before[?.!]*\s*$"),
    ("historical", "past-marker",
     r"\b(previous(ly)?|former(ly)?|originally|in the past|past|expired|earlier|prior|would have|had been|back when"
     r"|anymore than|back (in|then)|at some point|as a (kid|child|teen|teenager|student|boy|girl)|growing up"
     r"|in (my|his|her|their) (teens|twenties|thirties|forties|fifties)|in (college|high school))\b"),
    ("historical", "past-period",
     r"\b(\w+ )?" + _PERIOD + r" ago\b|\blast " + _PERIOD + r"\b|\buntil (last|recently)\b"
     r"|\b(at|in|from) (my|his|her|their) last (job|role|company|employer|place|flat|house|apartment)\b"
     r"|\bwhen (" + _WHO + r"|the \w+) (lived|was|were|worked|had|studied)\b"),
    ("historical", "old-value",
     r"\bold (job|flat|place|house|home|address|apartment|car|phone|number|boss|manager|school|team|company|blog"
     r"|city|neighbou?rhood|gym|doctor|dentist|landlord|role|routine|diet|bike|laptop|email)\b"
     r"|\b(my|his|her|their|the user's) ex\b|\bex-\w+|\b(was|were) (my|his|her|their|the user's) first\b"
     r"|\b(was|were|have|has|did) " + _WHO + r" ever\b"
     r"|\b(the|my|his|her|their) \w+ (that |which )?" + _WHO + r" (left|quit|sold)\b"),
    # retraction_aware: a plan or statement that may have been called off or taken back
    ("retraction_aware", "still-planning",
     r"\bstill (planning|going|thinking|considering|pursuing|intending|hoping|set on|on\b|happening|a go"
     r"|doing|taking|committed|moving forward|keen|interested|attending)"),
    ("retraction_aware", "changed-mind",
     r"\b(decided (against|not|to skip)|chang(ed|ing|e) (his|her|their|my|your) minds?|called off|gave up on"
     r"|any ?longer"
     r"|backed out|dropped the idea)"),
    ("retraction_aware", "called-off",
     r"\b(cancel(l?ed|s)?|call(ed|ing)? off|back(ed)? out|drop(ped)? out|dropped|give(n)? up on|scrap(ped)?"
     r"|abandon(ed)?|withdr[ae]w|retract(ed)?|take back|took back|forget|disregard|ignore|never mind|rul(e|ed) out"
     r"|turn(ed)? down|declin(e|ed) (the|an?|my|his|her|their)|pull(ed)? out|on hold|off the table|no longer"
     r"|postpon(e|ed)|undo|correct(ed)? myself|stop(ped)? planning|not (doing|going|planning)\b.{0,20}\bany ?more)\b"
     r"|\b(is|was|are|were) .{1,40}\boff[?.!]*\s*$"),
    ("retraction_aware", "pursuing", r"\b(is|are) .{1,40}\b(pursuing|planning to|thinking (of|about)|considering)\b"),
    # upcoming: an event or deadline ahead
    ("upcoming", "upcoming",
     r"\b(upcoming|coming up|in the coming|next (week|month|year|few)|scheduled|deadlines?|registered for"
     r"|signed up for|due (date|soon)|agenda|on the calendar|appointments?)\b"),
    ("upcoming", "future-plan", r"\b(will|going to) (be )?(attend|travel|fly|visit|have)\b"),
    ("upcoming", "when-ahead",
     r"\b(when|what time|what date)('s| is| are| do| does| will| am) (?!" + _WHO + r" (usually|normally|typically"
     r"|always|generally)\b)(" + _WHO + r"|my|his|her|their|our|the user's|the)\b|\bdate of (my|his|her|their|the)\b"
     r"|\bwill " + _WHO + r"\b|\b(what|which|where|who|when)\b.{0,30}\b(am|are|is) " + _WHO
     + r" (going|seeing|meeting|flying)\b|\bon (my|his|her|their) (birthday|anniversary)\b"),
    ("upcoming", "time-ahead",
     r"\b(this|on|next|coming) " + _DAY + r"\b|\b(tomorrow|tonight|later today|soon|this (week|month))\b"
     r"|\bnext\b(?![ -](door|to)\b)|\bdue\b(?! to\b)|\b(plans?|planned) (for|this)\b|\bplanned\b|\brsvp"
     r"|\b(reservations?|bookings?|calendar|to-?do)\b|\bhow (many \w+|long) (until|till|to go)\b"),
    # broad: open questions about a person or a whole area of their life
    ("broad", "tell-me-about",
     r"\b(tell me (a bit |a little |more )?(about|everything)|what (do|should) (you|i|we) know|overview"
     r"|summar(y|ise|ize)|sum up|recap|rundown|run-down|big picture|paint a picture|describe|profile|bio|brief me"
     r"|catch me up|introduce me"
     r"|know(ing)? about (me|myself|my|him|her|them|the user)|about (me|myself))\b"),
    ("broad", "background",
     r"\b(background|outside (of )?(work|teaching|the office|school|job)|free time|spare time|for fun|hobbies"
     r"|stress relief|family (situation|background))\b"),
    ("broad", "whole-person",
     r"\bwho am i[?.!]*\s*$|\bwhat kind of person\b|\bpersonality\b|\blifestyle\b|\bin general\b"
     r"|\b(my|his|her|their) (life|story|situation|deal)\b|\bgoing on (in|with)\b|\bkeeps? (me|him|her|them) busy\b"
     r"|\bwhat (are|is) (all |some )?(of )?(my|his|her|their|the user's) (goals|values|interests|preferences|habits"
     r"|routines|strengths|passions|priorities|favou?rite things)\b|\b(important|matters?( most)?) to\b"
     r"|\bpassionate about\b|\b(care about|enjoy|get up to|to relax)\b|\b(weekends?|days?|evenings?) look like\b"
     r"|\bwhat are (all|some) (of )?(my|his|her|their)\b|\bfacts about\b"),
)
# fmt: on

#: (intent, rule name, compiled pattern); order matters — the first match wins.
INTENT_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (intent, name, re.compile(pattern, re.IGNORECASE)) for intent, name, pattern in _INTENT_RULE_SOURCE
)

#: A request for a recommendation or advice ("can you suggest a hotel for my upcoming trip?",
#: "recommend a movie to watch tonight", "any tips for my trip next week?"): it may mention an
#: event ahead, but it asks what to choose, not what is planned, so the ``upcoming`` rules do not
#: apply to it and its other words decide (``current`` when none does: rule ``request``). A
#: question about the event itself ("when is my upcoming dentist appointment?") has no such cue.
REQUEST_RULE = re.compile(
    r"\b(suggest(ion)?s?|recommend(ation)?s?|advi[cs]e|tips?|ideas? (for|on|about)|(any|some|good) ideas"
    r"|help me (choose|pick|find|decide)|what should " + _WHO + r" (watch|read|eat|cook|make|wear|try|listen to|play)"
    r"|what would you (suggest|recommend))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class IntentDecision:
    intent: str
    rule: str  # name of the rule that fired, "default", "request" or "given"


#: A quoted span: double quotes, curly quotes, or single quotes that open after a space (or the
#: start) and close before a space, punctuation or the end (an apostrophe inside a word is none).
QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|‘[^’]*’|(?:(?<=\s)|^)'[^']+'(?=[\s,.;:?!)]|$)")


def infer_intent(text: str) -> IntentDecision:
    """Intent of a query by the first matching rule of :data:`INTENT_RULES` (default ``current``),
    read on the text without its quoted spans (:data:`QUOTED`: a quoted event is named, not asked
    about). In a request (:data:`REQUEST_RULE`) the ``upcoming`` rules are skipped: a request
    that an ``upcoming`` rule matches and no other rule does is ``current`` by rule ``request``."""
    text = QUOTED.sub(" ", text)
    request = REQUEST_RULE.search(text) is not None
    skipped = False
    for intent, name, pattern in INTENT_RULES:
        if request and intent == "upcoming":
            skipped = skipped or pattern.search(text) is not None
        elif pattern.search(text):
            return IntentDecision(intent, name)
    return IntentDecision("current", "request" if skipped else "default")


# ----------------------------------------------------------------------------- routing

#: Category prototypes: a description (for embedding similarity) and keyword stems (prefix match).
# fmt: off
CATEGORY_PROTOTYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "IDENTITY_SELF_CONCEPT": (
        "who the person is: name, age, nationality, heritage, religion, "
        "profession, where they come from, personality and values",
        ("identity", "name", "age", "born", "birth", "heritage", "ethnic", "nationalit", "religio", "faith",
         "spiritual", "background", "origin", "from", "grew", "raised", "hometown", "personality", "values",
         "profession", "career", "job", "work", "employ", "occupation", "degree", "educat", "school", "college",
         "universit", "graduat", "style", "learning", "language", "speak", "live", "lives", "city"),
    ),
    "RELATIONAL_BONDS": (
        "family, partner, spouse, children, parents, siblings, friends, pets and relationships",
        ("family", "partner", "spouse", "wife", "husband", "boyfriend", "girlfriend", "married", "wedding", "child",
         "kid", "son", "daughter", "mother", "father", "mom", "dad", "parent", "brother", "sister", "sibling", "friend",
         "relationship", "dating", "pet", "dog", "cat", "grand", "cousin", "uncle", "aunt", "roommate", "neighbo"),
    ),
    "INTELLECTUAL_INTERESTS": (
        "intellectual interests: topics they study, read or research, books, learning, courses, ideas",
        ("read", "book", "learn", "study", "studi", "research", "course", "class", "interest", "curious", "topic",
         "philosoph", "science", "history", "podcast", "language", "certif", "qualif", "degree", "master", "phd",
         "education", "lecture"),
    ),
    "HEALTH_WELLBEING": (
        "health, medical conditions, diagnoses, medication, diet restrictions, fitness, sleep, mental wellbeing",
        ("health", "medical", "doctor", "diagnos", "condition", "illness", "disease", "allerg", "medic", "therap",
         "pain", "injur", "surgery", "sleep", "anxiety", "stress", "mental", "diet", "vegetarian", "vegan", "weight",
         "fitness", "exercise", "workout", "gym", "run", "yoga", "migraine", "pregnan", "symptom", "wellbeing",
         "wellness"),
    ),
    "PROJECTS_ENDEAVORS": (
        "projects and endeavors: work projects, side businesses, startups, writing a book, building something, goals",
        ("project", "build", "launch", "startup", "business", "company", "product", "brand", "writing", "novel", "book",
         "app", "goal", "plan", "venture", "side", "portfolio", "thesis", "research", "promotion", "team", "client",
         "pursu"),
    ),
    "HOBBIES_RECREATION": (
        "hobbies and recreation: sports, games, music, cooking, travel for fun, crafts, outdoor activities",
        ("hobb", "fun", "free", "spare", "weekend", "sport", "game", "play", "music", "guitar", "piano", "sing",
         "paint", "draw", "craft", "cook", "bake", "garden", "hik", "climb", "swim", "cycl", "bike", "run", "race",
         "marathon", "fish", "camp", "photograph", "danc", "knit", "travel", "outside", "relax", "leisure", "club"),
    ),
    "PREFERENCES_HABITS": (
        "preferences and habits: favorite foods, drinks, routines, likes and dislikes, diet, daily habits",
        ("prefer", "favorite", "favourite", "like", "love", "hate", "dislike", "enjoy", "habit", "routine", "usually",
         "always", "never", "daily", "morning", "coffee", "tea", "food", "eat", "drink", "diet", "restaurant", "style",
         "wear", "music", "tool", "use", "uses"),
    ),
    "FINANCIAL_MATERIAL": (
        "money and possessions: salary, savings, debt, rent, mortgage, budget, car, house, costs and prices",
        ("money", "salary", "income", "earn", "pay", "paid", "cost", "price", "budget", "saving", "debt", "loan",
         "mortgage", "rent", "invest", "stock", "financ", "bank", "afford", "expens", "car", "vehicle", "house", "home",
         "apartment", "own", "bought", "buy", "sell", "sold", "dollar", "$", "£", "€", "much", "worth", "tuition",
         "fee", "mile"),
    ),
    "OBLIGATIONS": (
        "obligations and commitments: deadlines, exams, reviews, appointments, duties, promises, due dates",
        ("deadline", "due", "exam", "test", "review", "appointment", "commit", "oblig", "duty", "promise", "submit",
         "submission", "meeting", "interview", "renew", "contract", "assignment", "report", "tax", "bill", "court",
         "jury", "certif", "registration", "register"),
    ),
    "LOGISTICAL_CONTEXT": (
        "logistics: upcoming trips, flights, travel dates, events, "
        "schedules, reservations, moving dates, where and when",
        ("trip", "flight", "fly", "travel", "visit", "event", "schedul", "calendar", "reserv", "booking", "book",
         "ticket", "hotel", "conference", "wedding", "party", "concert", "move", "moving", "lease", "week", "weekend",
         "tomorrow", "date", "upcoming", "coming", "next", "when", "where", "commute", "appointment"),
    ),
    "OTHER": (
        "other facts that fit no category",
        (),
    ),
}
# fmt: on

_WORD = re.compile(r"[a-z0-9$£€]+")
ROUTING_MIN_SCORE = 0.15
ROUTING_MAX_CATEGORIES = 5
#: Our choice: share of the routing score from keyword hits vs prototype-embedding similarity.
KEYWORD_SHARE = 0.5
_OTHER = CATEGORY_NAMES.index("OTHER")


@functools.lru_cache(maxsize=65536)
def _word_hits(word: str) -> tuple[int, ...]:
    """Categories whose keyword stems prefix ``word`` (memoised: words repeat across queries)."""
    return tuple(
        c for c, name in enumerate(CATEGORY_NAMES) if any(word.startswith(s) for s in CATEGORY_PROTOTYPES[name][1])
    )


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
        return {
            CATEGORY_NAMES[c]: w for c, w in enumerate(np.asarray(self.weights, dtype=np.float64).tolist()) if w > 0
        }

    @property
    def top(self) -> int | None:
        return int(primary_index(self.weights)) if self.weights.max() > 0 else None


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

    def raw_scores(
        self, text: str, query_vec: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
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

    def categorize(
        self, text: str, vec: np.ndarray | None = None, temperature: float | None = None
    ) -> dict[str, float]:
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
            raise ValueError(f"categories: unknown category {shown(name)}; expected one of {', '.join(CATEGORY_NAMES)}")
        value = float(value)
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"categories: weight {value} for {name} outside [0, 1]")
        w[CATEGORY_NAMES.index(name)] = value
    return Routing(w, np.zeros(N_CATEGORIES), None, given=True)


def check_intent(name: str) -> str:
    key = str(name).strip().lower()
    if key not in INTENT_NAMES:
        raise ValueError(f"intent: unknown intent {shown(name)}; expected one of {', '.join(INTENT_NAMES)}")
    return key
