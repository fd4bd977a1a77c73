"""Vocabulary and templates of the built-in suite generator (all our own text).

Nothing here comes from the paper's benchmark: names, places, companies, fact wordings,
conversational lines and question phrasings are written for this project. Templates are
``str.format`` strings over a fixed set of fields filled by :mod:`frcore.bench._generator`:

``first`` (persona first name), ``prof`` (profession), ``v`` (the slot value), ``old`` (the
previous value of the slot), ``hometown``, ``sib`` / ``sib_rel`` / ``sib_prof`` (a sibling),
``partner``, ``pet`` / ``petname``, ``city2``, ``when`` (a human-readable event date),
``clock`` (a time of day), ``amount`` / ``n`` / ``age`` (numbers), ``company``.

Lexical variety is deliberate: a slot's fact templates (``fact``), the user turns that state it
(``say``) and the questions that ask about it (``question``) use different content words, so a
retriever cannot win by word overlap alone (the generator's tests measure this). ``chatter``
lines are hard distractors: they reuse the question's vocabulary but state nothing about the
persona; ``restate`` lines mention a value in passing inside an unrelated conversation.
"""

from __future__ import annotations

from dataclasses import dataclass

# --------------------------------------------------------------------------- identity pools

FIRST_NAMES: tuple[str, ...] = (
    "Maren",
    "Teodor",
    "Ilse",
    "Ansgar",
    "Soraya",
    "Bastian",
    "Liesel",
    "Osric",
    "Pilar",
    "Casimir",
    "Wren",
    "Anouk",
    "Ferran",
    "Thea",
    "Lorcan",
    "Yara",
    "Emeric",
    "Solveig",
    "Dario",
    "Ingrid",
    "Rafferty",
    "Noor",
    "Cosimo",
    "Elodie",
    "Evert",
    "Zofia",
    "Leander",
    "Marisol",
    "Tobiah",
    "Greta",
    "Aurelio",
    "Kirsi",
    "Matthias",
    "Ottilie",
    "Sefton",
    "Isolde",
    "Lazlo",
    "Vesna",
    "Ambrose",
    "Clio",
    "Evander",
    "Romilly",
    "Benedek",
    "Signe",
    "Ignatius",
    "Malin",
    "Oisin",
    "Henrike",
    "Florian",
    "Tamsin",
    "Kazimir",
    "Ysolde",
)
LAST_NAMES: tuple[str, ...] = (
    "Halvorsen",
    "Marchetti",
    "Okonkwo-Reyes",
    "Draycott",
    "Vasquez-Lind",
    "Bergquist",
    "Pennington",
    "Szabo",
    "Ferreira-Holt",
    "Lindqvist",
    "Abernathy",
    "Castellano",
    "Hargreave",
    "Novak",
    "Ellery",
    "Quintero",
    "Rasmussen",
    "Whitlock",
    "Dunmore",
    "Albescu",
    "Tremaine",
    "Valcourt",
    "Ashdown",
    "Kowalczyk",
    "Strand",
    "Montague",
    "Oyelaran",
    "Fairbairn",
    "Delacroix",
    "Mbeki-Stone",
    "Ravensworth",
    "Sandoval",
    "Thorsby",
    "Ingleby",
    "Petrakis",
)
SISTER_NAMES: tuple[str, ...] = (
    "Ottoline",
    "Sunniva",
    "Philippa",
    "Mireille",
    "Isaura",
    "Lavinia",
    "Rosalind",
    "Perpetua",
)
BROTHER_NAMES: tuple[str, ...] = (
    "Bram",
    "Corentin",
    "Ansel",
    "Torben",
    "Gideon",
    "Cormac",
    "Eskil",
    "Anselm",
)
PARTNER_NAMES: tuple[str, ...] = (
    "Jorun",
    "Alaric",
    "Fenella",
    "Tycho",
    "Ines",
    "Barnaby",
    "Oriane",
    "Sindre",
    "Calla",
    "Peregrine",
    "Idony",
    "Lucan",
    "Marit",
    "Evren",
    "Saoirse",
    "Dagny",
)
PET_KINDS: tuple[str, ...] = (
    "grey tabby cat",
    "border collie",
    "lop-eared rabbit",
    "pair of budgies",
    "greyhound",
    "tortoise",
    "ginger cat",
    "dachshund",
)
PET_NAMES: tuple[str, ...] = (
    "Pickle",
    "Biscotti",
    "Mothball",
    "Quince",
    "Captain",
    "Wombat",
    "Pepper",
    "Sprocket",
    "Waffles",
    "Tansy",
    "Bramble",
    "Figaro",
)
PROFESSIONS: tuple[str, ...] = (
    "landscape architect",
    "sound engineer",
    "pharmacist",
    "structural engineer",
    "paediatric nurse",
    "data analyst",
    "museum conservator",
    "physiotherapist",
    "secondary school teacher",
    "urban planner",
    "copy editor",
    "veterinary technician",
    "patent attorney",
    "UX researcher",
    "brewery chemist",
    "air traffic controller",
    "speech therapist",
    "actuary",
    "set designer",
    "marine biologist",
)
CITIES: tuple[str, ...] = (
    "Ghent",
    "Trondheim",
    "Bologna",
    "Pécs",
    "Tartu",
    "Graz",
    "Aarhus",
    "Nantes",
    "Galway",
    "Utrecht",
    "Bilbao",
    "Kraków",
    "Halifax",
    "Dunedin",
    "Tampere",
    "Ljubljana",
    "Bergen",
    "Valladolid",
    "Winnipeg",
    "Hobart",
    "Coimbra",
    "Brno",
    "Malmö",
    "Plovdiv",
)
HOMETOWNS: tuple[str, ...] = (
    "a fishing village on the Baltic coast",
    "a mining town in the Welsh valleys",
    "a farming community outside Saskatoon",
    "a suburb of Lyon",
    "a ferry town in Norway",
    "a hill town in Umbria",
    "a market town in Bavaria",
    "a river town in Ontario",
    "a port city in Galicia",
    "a small island in the Azores",
)
COMPANY_HEADS: tuple[str, ...] = (
    "Corvane",
    "Tillbrook",
    "Ostrava",
    "Bellwether",
    "Quillon",
    "Marrowfield",
    "Halcyra",
    "Drummond",
    "Vantry",
    "Elmstead",
    "Northgale",
    "Brightwater",
    "Kestrel",
    "Ironvale",
    "Sablewood",
    "Pemberly",
    "Arbelo",
    "Cindermoor",
    "Ferrovia",
    "Lumenhall",
)
COMPANY_TAILS: tuple[str, ...] = (
    "Analytics",
    "Labs",
    "Partners",
    "Studio",
    "Health",
    "Logistics",
    "Engineering",
    "Works",
    "Collective",
    "Systems",
    "& Co",
    "Institute",
)
UNIVERSITIES: tuple[str, ...] = (
    "a small liberal arts college",
    "the state university",
    "a technical institute",
    "an art school in the capital",
    "a university by the sea",
    "an evening degree programme",
)
FIELDS: tuple[str, ...] = (
    "geology",
    "comparative literature",
    "chemistry",
    "philosophy",
    "civil engineering",
    "art history",
    "statistics",
    "anthropology",
    "music composition",
    "economics",
)
LANGUAGES: tuple[str, ...] = (
    "Greek",
    "Tagalog",
    "Polish",
    "Farsi",
    "Welsh",
    "Yoruba",
    "Hungarian",
    "Gujarati",
    "Finnish",
)
CONDITIONS: tuple[str, ...] = (
    "type 1 diabetes",
    "coeliac disease",
    "chronic migraines",
    "asthma",
    "hypothyroidism",
    "a severe peanut allergy",
    "dyslexia",
    "a heart murmur",
)

# --------------------------------------------------------------------------- slot kinds


@dataclass(frozen=True)
class SlotKind:
    """A slot whose value can change over time (supersession chains, AV1 / AV4 / AV5).

    ``categories``: (primary, secondary) canonical category names; the generator uses the
    primary alone or a 0.7/0.3-style split. ``values``: the pool of slot values (``"@company"``
    or ``"@city"`` draw from the identity pools). ``fact`` states a value; ``fact_new`` states a
    change from ``old`` to ``v``. ``say`` / ``say_new`` are the user turns of a critical session
    that state them. ``restate`` mentions a value in passing; ``restate_q`` does so with the
    question's own vocabulary (a wrong item lexically closer to the question than the support).
    ``hobby``: whether the slot is about free time (used by the broad query, AV5).
    """

    slot: str
    categories: tuple[str, str]
    topic: str
    values: tuple[str, ...]
    fact: tuple[str, ...]
    fact_new: tuple[str, ...]
    say: tuple[str, ...]
    say_new: tuple[str, ...]
    question: tuple[str, ...]
    answer: str
    restate: tuple[str, ...]
    restate_q: tuple[str, ...]
    chatter: tuple[str, ...]
    hobby: bool = False


SLOT_KINDS: tuple[SlotKind, ...] = (
    SlotKind(
        slot="employer",
        categories=("PROJECTS_ENDEAVORS", "IDENTITY_SELF_CONCEPT"),
        topic="job news",
        values=("@company",),
        fact=("Works as {a_prof} at {v}", "Holds {a_prof} position with {v}"),
        fact_new=(
            "Left {old} and started at {v}",
            "Took a new {prof} role at {v}, leaving {old} behind",
            "Joined {v} after handing in notice at {old}",
        ),
        say=(
            "I've been {a_prof} at {v} for a few years now, mostly heads-down on client stuff",
            "so at {v} we just got a new manager and I'm not sure how I feel about her",
        ),
        say_new=(
            "big news, I handed in my notice at {old}. starting at {v} next month!",
            "first week at {v} done, honestly so different from {old}",
        ),
        question=(
            "Which company is {first} employed by at the moment?",
            "Who is {first}'s employer these days?",
            "Where does {first} draw a paycheck from currently?",
            "Where does {first} work?",
        ),
        answer="{v} (previously {old})",
        restate=(
            "grabbing lunch near the {v} office, any quick salad ideas that travel well?",
            "the {v} holiday party is coming up and my only blazer has a stain",
            "someone at {v} microwaved fish again, the whole floor smells",
        ),
        restate_q=(
            "my employer {v} finally sorted out the parking at the moment, small wins",
            "{v} is still the company paying me, so I guess I can't complain too loudly",
        ),
        chatter=(
            "my cousin hates her employer, how do I tell her gently to just quit?",
            "is it weird to put a company logo sticker on a personal laptop?",
            "what does a paycheck stub even mean by 'gross' versus 'net'?",
        ),
    ),
    SlotKind(
        slot="city_of_residence",
        categories=("LOGISTICAL_CONTEXT", "IDENTITY_SELF_CONCEPT"),
        topic="moving house",
        values=("@city",),
        fact=("Lives in {v}", "Rents an apartment in {v}"),
        fact_new=(
            "Relocated from {old} to {v}",
            "Moved to {v} for a fresh start",
            "Packed up the {old} flat and settled in {v}",
        ),
        say=(
            "honestly {v} in winter is so grey, I need a daylight lamp recommendation",
            "my place in {v} has the tiniest kitchen you have ever seen",
        ),
        say_new=(
            "boxes everywhere. the move to {v} is officially done",
            "ok I did it, left {old} behind. new chapter in {v}",
        ),
        question=(
            "Which city is {first} based in these days?",
            "Where does {first} call home right now?",
            "What town is {first}'s current address in?",
            "Where does {first} live?",
        ),
        answer="{v} (moved from {old})",
        restate=(
            "walked along the river in {v} this morning, the fog was unreal",
            "the trams in {v} are never on time, I swear",
            "found a tiny bakery in {v} that does cardamom buns",
        ),
        restate_q=(
            "home right now is still {v}, and the city is freezing",
            "is {v} a good town to be based in long term, what do you think?",
        ),
        chatter=(
            "what makes a city a good home base for someone in their thirties?",
            "my friend asked which town has the best transit, no idea what to tell her",
            "how do people decide where to call home after uni?",
        ),
    ),
    SlotKind(
        slot="diet",
        categories=("PREFERENCES_HABITS", "HEALTH_WELLBEING"),
        topic="eating habits",
        values=("vegetarian", "vegan", "pescatarian", "keto", "gluten-free", "flexitarian", "dairy-free"),
        fact=("Follows a {v} diet", "Eats strictly {v}"),
        fact_new=(
            "Switched from {old} to {v} eating",
            "Went {v} after years of being {old}",
        ),
        say=(
            "I've been {v} for ages so any recipe ideas need to fit that",
            "cooking tonight, and remember I'm {v} so nothing weird please",
        ),
        say_new=(
            "update: I'm {v} now, dropped the {old} thing last month",
            "so I stopped being {old}. going {v} and feeling pretty good about it",
        ),
        question=(
            "What food restrictions does {first} have now?",
            "What should I keep in mind when suggesting meals for {first}?",
            "Which dishes are off the table for {first} lately?",
            "What diet does {first} follow?",
        ),
        answer="{v} (no longer {old})",
        restate=(
            "made a {v} chili last night that actually slapped",
            "any {v} snacks for a long train ride?",
            "the {v} options at the office canteen are tragic",
        ),
        restate_q=(
            "suggesting meals to me is easy, just keep it {v}",
            "food restrictions: {v}, as always. what should I bring to the potluck?",
        ),
        chatter=(
            "what's a good dish to bring to a potluck where everyone has food restrictions?",
            "how do restaurants keep track of all the meals people can't have?",
            "suggest some meals for a picky six-year-old?",
        ),
    ),
    SlotKind(
        slot="fitness_routine",
        categories=("HOBBIES_RECREATION", "HEALTH_WELLBEING"),
        topic="exercise",
        values=(
            "lap swimming",
            "trail running",
            "bouldering",
            "spin classes",
            "rowing",
            "kickboxing",
            "road cycling",
            "reformer pilates",
        ),
        fact=("Exercises mostly by {v}", "Does {v} three times a week"),
        fact_new=(
            "Swapped {old} for {v}",
            "Took up {v} and stopped {old}",
        ),
        say=(
            "{v} again this morning, my legs are jelly",
            "I try to fit in {v} before work, it keeps me sane",
        ),
        say_new=(
            "I quit {old}, it was wrecking my knees. doing {v} now",
            "new obsession: {v}. can't believe I spent years on {old}",
        ),
        question=(
            "How does {first} stay active lately?",
            "What is {first}'s current workout of choice?",
            "Which sport keeps {first} fit nowadays?",
            "How does {first} exercise?",
        ),
        answer="{v} (gave up {old})",
        restate=(
            "sore from {v} yesterday, any stretches for tight hips?",
            "bought new gear for {v}, way too expensive",
            "skipped {v} today because of the rain, feeling guilty",
        ),
        restate_q=(
            "my workout of choice is still {v}, but I'm bored of it lately",
            "staying active = {v} for me, any tips to keep it fresh?",
        ),
        chatter=(
            "what's the best workout for someone who sits all day?",
            "how do people stay active in the dark months?",
            "is it bad to do a hard workout on an empty stomach?",
        ),
        hobby=True,
    ),
    SlotKind(
        slot="vehicle",
        categories=("FINANCIAL_MATERIAL", "LOGISTICAL_CONTEXT"),
        topic="getting around",
        values=(
            "secondhand hatchback",
            "cargo bike",
            "used pickup truck",
            "hybrid sedan",
            "vintage motorbike",
            "folding e-bike",
            "small city car",
        ),
        fact=("Commutes on a {v}", "Owns a {v}"),
        fact_new=(
            "Sold the {old} and bought a {v}",
            "Replaced the {old} with a {v}",
        ),
        say=(
            "my {v} made a weird rattling noise on the way home",
            "honestly the {v} is the best thing I've bought in years",
        ),
        say_new=(
            "said goodbye to the {old} today. the {v} arrives friday",
            "got rid of the {old}, picked up a {v} instead",
        ),
        question=(
            "How does {first} get from place to place now?",
            "What does {first} drive or ride these days?",
            "What vehicle is parked outside {first}'s home currently?",
            "What vehicle does {first} own?",
        ),
        answer="a {v} (replaced the {old})",
        restate=(
            "had to pump the tyres on the {v} again, is there a slow leak?",
            "parking the {v} near the market is a nightmare on saturdays",
        ),
        restate_q=(
            "the {v} is still what I drive, and it's parked outside in the snow",
            "these days I ride the {v} everywhere, any tips for rain?",
        ),
        chatter=(
            "which vehicle is cheaper to run, electric or petrol?",
            "how do people ride in winter without freezing?",
            "my neighbour parked outside my place again, should I say something?",
        ),
    ),
    SlotKind(
        slot="morning_drink",
        categories=("PREFERENCES_HABITS", "HEALTH_WELLBEING"),
        topic="caffeine",
        values=(
            "black coffee",
            "oat-milk lattes",
            "green tea",
            "yerba mate",
            "decaf espresso",
            "masala chai",
            "hot lemon water",
        ),
        fact=("Starts every day with {v}", "Drinks {v} each morning"),
        fact_new=(
            "Gave up {old}; mornings are {v} now",
            "Switched from {old} to {v} at breakfast",
        ),
        say=(
            "can't function before my {v}, seriously",
            "made my {v} and now I'm ready for anything",
        ),
        say_new=(
            "broke up with {old}. it's {v} for me from now on",
            "week three of {v} instead of {old}, I feel less jittery",
        ),
        question=(
            "What does {first} reach for first thing after waking up?",
            "What's {first}'s go-to hot beverage at the moment?",
            "What does {first} drink each morning?",
        ),
        answer="{v} (used to be {old})",
        restate=(
            "the cafe near me makes terrible {v}, why is it so hard",
            "ran out of {v}, this is a tragedy",
        ),
        restate_q=(
            "first thing after waking up: {v}. the beverage of champions",
            "my go-to is still {v}, don't judge",
        ),
        chatter=(
            "is a hot beverage after noon really that bad for sleep?",
            "what do people reach for first thing if they don't like caffeine?",
        ),
    ),
    SlotKind(
        slot="creative_pastime",
        categories=("HOBBIES_RECREATION", "INTELLECTUAL_INTERESTS"),
        topic="crafts",
        values=(
            "pottery",
            "woodworking",
            "watercolour painting",
            "film photography",
            "knitting",
            "bass guitar",
            "linocut printing",
            "embroidery",
        ),
        fact=("Spends weekends on {v}", "Has gotten really into {v}"),
        fact_new=(
            "Dropped {old}; hooked on {v} instead",
            "Moved on from {old} to {v}",
        ),
        say=(
            "finished my first proper {v} piece and I'm weirdly emotional about it",
            "whole saturday gone to {v}, zero regrets",
        ),
        say_new=(
            "I sold all my {old} stuff. {v} is the thing now",
            "signed up for a {v} class, {old} just wasn't clicking anymore",
        ),
        question=(
            "What creative pastime fills {first}'s free hours lately?",
            "Which craft is {first} devoting spare time to now?",
            "What does {first} spend weekends on?",
        ),
        answer="{v} (before that, {old})",
        restate=(
            "where do people buy decent supplies for {v}?",
            "watched a three hour video about {v} instead of sleeping",
        ),
        restate_q=(
            "my free hours lately all go to {v}, it's a problem",
            "{v} is still my craft of choice, spare time well spent",
        ),
        chatter=(
            "how do adults find spare time for a creative pastime?",
            "any crafts that are relaxing after a long day?",
        ),
        hobby=True,
    ),
    SlotKind(
        slot="study_subject",
        categories=("INTELLECTUAL_INTERESTS", "PROJECTS_ENDEAVORS"),
        topic="learning something new",
        values=(
            "Portuguese",
            "Japanese",
            "astronomy",
            "Byzantine history",
            "music theory",
            "botany",
            "Mandarin",
            "organic chemistry",
        ),
        fact=("Is studying {v} in the evenings", "Is teaching themself {v}"),
        fact_new=(
            "Shelved {old} and is now learning {v}",
            "Abandoned {old}; {v} is the new evening project",
        ),
        say=(
            "I've been doing an hour of {v} after dinner, slowly getting it",
            "bought a stack of {v} books, wish me luck",
        ),
        say_new=(
            "giving up on {old}, it wasn't sticking. starting {v} instead",
            "new evening project: {v}. {old} can wait",
        ),
        question=(
            "What subject is {first} curious about these days?",
            "What is {first} trying to get better at intellectually right now?",
            "What is {first} studying in the evenings?",
        ),
        answer="{v} (moved on from {old})",
        restate=(
            "read a wild article about {v} on the train",
            "need a beginner-friendly podcast about {v}",
        ),
        restate_q=(
            "the subject I'm curious about right now is still {v}",
            "trying to get better at {v} these days, any apps?",
        ),
        chatter=(
            "how do you stay curious about a subject as an adult?",
            "is it worth paying for an online course to get better at something?",
        ),
        hobby=True,
    ),
)

# --------------------------------------------------------------------------- stable identity


@dataclass(frozen=True)
class StableKind:
    """A stable identity fact (AV3): never changes, asked about late."""

    key: str
    categories: tuple[str, str]
    topic: str
    fact: tuple[str, ...]
    say: tuple[str, ...]
    question: tuple[str, ...]
    answer: str
    restate: tuple[str, ...]
    numeric: bool = False


STABLE_KINDS: tuple[StableKind, ...] = (
    StableKind(
        key="origin",
        categories=("IDENTITY_SELF_CONCEPT", "RELATIONAL_BONDS"),
        topic="childhood memories",
        fact=("Grew up in {hometown}, one of {n} children", "Raised in {hometown} in a family of {n} kids"),
        say=("I grew up in {hometown}, {n} of us kids in a tiny house",),
        question=("What is {first}'s hometown?", "Where did {first} spend the early years?"),
        answer="{hometown}; one of {n} children",
        restate=("smelled salt air today and it took me straight back to being a kid in {hometown}",),
        numeric=True,
    ),
    StableKind(
        key="sibling",
        categories=("RELATIONAL_BONDS", "IDENTITY_SELF_CONCEPT"),
        topic="family",
        fact=(
            "Has {a_sib_rel} named {sib} who works as {a_sib_prof}",
            "Is close to {sib}, {a_sib_rel} employed as {a_sib_prof}",
        ),
        say=("my {sib_rel} {sib} is {a_sib_prof}, we talk basically every day",),
        question=("Who is in {first}'s immediate family?", "Does {first} have any siblings?"),
        answer="{sib_rel} {sib}, {a_sib_prof}",
        restate=(
            "{sib} called me for an hour about nothing, love that",
            "need a birthday present idea for {sib}, any thoughts?",
        ),
    ),
    StableKind(
        key="condition",
        categories=("HEALTH_WELLBEING", "IDENTITY_SELF_CONCEPT"),
        topic="health check-in",
        fact=("Has {condition}, diagnosed at age {age}", "Was diagnosed with {condition} at {age}"),
        say=("I've had {condition} since I was {age}, so I'm pretty used to managing it",),
        question=(
            "Any medical issues I should keep in mind for {first}?",
            "What health concerns does {first} deal with?",
        ),
        answer="{condition} (since age {age})",
        restate=("the {condition} thing flared up a bit this week, nothing major",),
        numeric=True,
    ),
    StableKind(
        key="education",
        categories=("IDENTITY_SELF_CONCEPT", "INTELLECTUAL_INTERESTS"),
        topic="old university friends",
        fact=("Studied {field} at {university}", "Holds a degree in {field} from {university}"),
        say=("back when I was doing {field} at {university} I pulled so many all-nighters",),
        question=("What did {first} major in?", "What's {first}'s academic background?"),
        answer="{field} at {university}",
        restate=("found my old {field} notes in a box, such a time capsule",),
    ),
    StableKind(
        key="language",
        categories=("IDENTITY_SELF_CONCEPT", "RELATIONAL_BONDS"),
        topic="heritage",
        fact=("Speaks {language} with their grandparents", "Grew up bilingual in {language}"),
        say=("at home we always spoke {language}, my grandparents barely know any English",),
        question=("Which tongues can {first} converse in?", "Is {first} multilingual?"),
        answer="{language} (plus English)",
        restate=("watched an old film in {language} with subtitles off, felt very proud",),
    ),
    StableKind(
        key="pet",
        categories=("RELATIONAL_BONDS", "HOBBIES_RECREATION"),
        topic="pet care",
        fact=("Has a {pet} called {petname}", "Shares the flat with {petname}, a {pet}"),
        say=("{petname} my {pet} knocked a glass off the table again this morning",),
        question=("Does {first} look after any animals?", "What creature lives with {first}?"),
        answer="a {pet} named {petname}",
        restate=("{petname} is snoring next to me while I type this",),
    ),
)

# --------------------------------------------------------------------------- expiring items


@dataclass(frozen=True)
class ExpiringKind:
    """A dated logistical item or obligation (AV2): expires at its event time."""

    key: str
    category: str  # LOGISTICAL_CONTEXT or OBLIGATIONS
    topic: str
    fact: str
    say: str
    pre: str  # mention before the event, in an unrelated conversation
    hour: int  # event hour (deadlines: 17)
    numeric: bool = False


EXPIRING_KINDS: tuple[ExpiringKind, ...] = (
    ExpiringKind(
        "dentist",
        "LOGISTICAL_CONTEXT",
        "scheduling",
        "Dentist cleaning booked for {when} at {clock}",
        "ugh, booked the dentist for {when}, {clock}. dreading it",
        "the dentist thing is coming up soon, is flossing the night before cheating?",
        10,
    ),
    ExpiringKind(
        "flight",
        "LOGISTICAL_CONTEXT",
        "travel planning",
        "Flying to {city2} on {when}, seat {n}C",
        "flights sorted: {city2} on {when}, I got seat {n}C",
        "what do you pack for a short trip to {city2}? it's coming up",
        7,
        True,
    ),
    ExpiringKind(
        "viewing",
        "LOGISTICAL_CONTEXT",
        "flat hunting",
        "Apartment viewing arranged for {when} at {clock}",
        "I have a viewing for a flat on {when}, {clock}. fingers crossed",
        "what questions should you ask a landlord at a viewing? mine is scheduled soon",
        18,
    ),
    ExpiringKind(
        "car_service",
        "LOGISTICAL_CONTEXT",
        "errands",
        "Vehicle inspection due at the garage on {when}",
        "the garage can take the car on {when} for the inspection",
        "my car is making a noise, hopefully the garage sorts it",
        9,
    ),
    ExpiringKind(
        "concert",
        "LOGISTICAL_CONTEXT",
        "weekend plans",
        "Holding {n} tickets for a string quartet concert on {when}",
        "I bought {n} tickets to a string quartet thing on {when}, so fancy",
        "what do people wear to a classical concert these days?",
        20,
        True,
    ),
    ExpiringKind(
        "tax",
        "OBLIGATIONS",
        "paperwork",
        "Tax return must be filed by {when}",
        "reminder to self: taxes have to be in by {when}",
        "tax deadline still ahead of me and the forms read like riddles",
        17,
    ),
    ExpiringKind(
        "grant",
        "OBLIGATIONS",
        "work deadline",
        "Owes a progress report to the funder by {when}",
        "the funder wants a progress report by {when}, panic",
        "how do you write an executive summary that isn't boring?",
        17,
    ),
    ExpiringKind(
        "exam",
        "OBLIGATIONS",
        "exam prep",
        "Sitting a professional certification exam on {when}",
        "I'm registered for the certification exam on {when}, help",
        "any tips for memorising a lot of definitions quickly?",
        9,
    ),
    ExpiringKind(
        "speech",
        "OBLIGATIONS",
        "a friend's wedding",
        "Promised to give a toast at a friend's wedding on {when}",
        "I said yes to giving the toast at the wedding on {when}, what was I thinking",
        "the wedding is coming up, how long should a toast be, roughly?",
        15,
    ),
    ExpiringKind(
        "jury",
        "OBLIGATIONS",
        "civic duty",
        "Summoned for jury service starting {when}",
        "got a jury summons for {when}. is that something I can postpone?",
        "do you get paid for jury service where I live?",
        9,
    ),
    ExpiringKind(
        "helping_move",
        "OBLIGATIONS",
        "helping family",
        "Agreed to help {sib} move house on {when}",
        "I told {sib} I'd help with the move on {when}, bringing the van",
        "best way to pack plates so they don't break?",
        8,
    ),
)

UPCOMING_QUESTIONS: tuple[str, ...] = (
    "What's on {first}'s calendar coming up?",
    "Does {first} have anything scheduled in the weeks ahead?",
    "Which commitments are still ahead for {first}?",
)
PAST_QUESTIONS: tuple[str, ...] = (
    "Which appointments or deadlines has {first} already gotten past?",
    "What scheduled events are behind {first} now?",
)

# --------------------------------------------------------------------------- contradictions


@dataclass(frozen=True)
class ContradictionKind:
    """A habit stated one way and later stated the opposite way (AV6)."""

    slot: str
    categories: tuple[str, str]
    topic: str
    old: str
    new: str
    say_old: str
    say_new: str
    question: tuple[str, ...]
    answer: str
    indicator: str
    numeric: bool = False


CONTRADICTION_KINDS: tuple[ContradictionKind, ...] = (
    ContradictionKind(
        "alcohol",
        ("HEALTH_WELLBEING", "PREFERENCES_HABITS"),
        "going out",
        "Doesn't drink alcohol at all",
        "Enjoys a glass of red wine with dinner most nights",
        "I don't drink, never have, so bars are kind of boring for me",
        "opened a nice bottle of red with dinner, my nightly ritual honestly",
        ("Is {first} teetotal?", "Would {first} be up for cocktails?", "Does {first} drink alcohol?"),
        "Yes: has wine with dinner most nights",
        "doesn't drink",
    ),
    ContradictionKind(
        "work_location",
        ("PROJECTS_ENDEAVORS", "LOGISTICAL_CONTEXT"),
        "work life",
        "Works fully remote from home",
        "Commutes into the office four days a week",
        "perks of being fully remote: I work in pyjamas",
        "the commute to the office four days a week is killing me",
        (
            "Where does {first} do the job from?",
            "Is {first} at a desk downtown or at the kitchen table?",
            "Does {first} work remote?",
        ),
        "Mostly at the office (four days a week)",
        "fully remote",
    ),
    ContradictionKind(
        "sleep",
        ("HEALTH_WELLBEING", "PREFERENCES_HABITS"),
        "sleep",
        "Is a night owl, rarely asleep before 2 a.m.",
        "Is up at 5:30 every morning and in bed by 10",
        "I'm such a night owl, 2am is early for me",
        "5:30 alarm, in bed by 10, I'm basically a farmer now",
        ("What are {first}'s sleeping hours like?", "Is {first} an early riser?", "Is {first} a night owl?"),
        "Early riser: up at 5:30, in bed by 10",
        "night owl",
        True,
    ),
    ContradictionKind(
        "cats",
        ("HEALTH_WELLBEING", "RELATIONAL_BONDS"),
        "neighbours",
        "Is allergic to cats",
        "Lets the neighbour's cat nap on the sofa every afternoon",
        "I'm allergic to cats, one sneeze and I'm done for",
        "the neighbour's cat naps on my sofa every afternoon, I love him",
        ("How does {first} get on with felines?", "Is {first} allergic to cats?"),
        "Fine: the neighbour's cat naps on the sofa daily",
        "allergic",
    ),
    ContradictionKind(
        "parties",
        ("PREFERENCES_HABITS", "RELATIONAL_BONDS"),
        "social life",
        "Dislikes big parties",
        "Loves hosting large dinner parties for twenty people",
        "big parties drain me, I'd rather stay in",
        "hosted twenty people for dinner again, I live for it",
        ("Does {first} enjoy throwing big get-togethers?", "Does {first} like big parties?"),
        "Yes: loves hosting dinners for twenty",
        "dislikes parties",
        True,
    ),
    ContradictionKind(
        "smoking",
        ("HEALTH_WELLBEING", "PREFERENCES_HABITS"),
        "habits",
        "Quit smoking years ago",
        "Has a cigarette on the balcony after work",
        "so glad I quit smoking, can't imagine going back",
        "had my after-work cigarette on the balcony, don't lecture me",
        ("Does {first} use tobacco?", "Has {first} quit smoking?"),
        "Yes: an after-work cigarette on the balcony",
        "quit",
    ),
)

# --------------------------------------------------------------------------- retractions


@dataclass(frozen=True)
class RetractionKind:
    """A plan stated and later explicitly withdrawn (AV7); ``retraction`` may hold a number
    that matters (then it also serves a historical numeric question, AV8)."""

    key: str
    categories: tuple[str, str]
    topic: str
    plan: str
    retraction: str
    say_plan: str
    say_retraction: str
    mention: str  # enthusiastic mention of the plan in an unrelated conversation
    question: tuple[str, ...]
    answer: str
    indicator: str
    numeric: bool = False
    numeric_question: str = ""
    numeric_answer: str = ""


RETRACTION_KINDS: tuple[RetractionKind, ...] = (
    RetractionKind(
        "puppy",
        ("PREFERENCES_HABITS", "RELATIONAL_BONDS"),
        "getting a pet",
        "Plans to adopt a rescue puppy this summer",
        "Called off the puppy adoption; the lease bans pets",
        "I'm adopting a rescue puppy this summer!! already picked names",
        "update on the puppy: not happening. the lease says no pets",
        "browsing dog beds for the puppy at midnight, bringing home a pup soon!",
        ("Is {first} bringing a dog home?",),
        "No: the adoption was called off (lease bans pets)",
        "adopting",
    ),
    RetractionKind(
        "mba",
        ("PROJECTS_ENDEAVORS", "FINANCIAL_MATERIAL"),
        "further study",
        "Is applying to a part-time MBA programme",
        "Decided against the MBA after seeing the {amount} tuition",
        "I'm applying to a part-time MBA, essays due soon",
        "the MBA is off. {amount} in tuition, are they serious",
        "my business school essay draft is 4 pages of waffle, help",
        ("Is {first} going back to school for a business degree?",),
        "No: dropped the MBA plan over the cost",
        "applying",
        True,
        "What price tag put {first} off further business study?",
        "{amount} in tuition",
    ),
    RetractionKind(
        "marathon",
        ("HOBBIES_RECREATION", "HEALTH_WELLBEING"),
        "race training",
        "Signed up to train for an autumn marathon",
        "Withdrew from the marathon because of a knee injury",
        "I signed up for a marathon this autumn, training plan printed",
        "pulling out of the marathon. knee says no",
        "long run on sunday, preparing for this race is eating my weekends",
        ("Is {first} preparing for a long-distance race?",),
        "No: withdrew because of a knee injury",
        "marathon training",
    ),
    RetractionKind(
        "renovation",
        ("FINANCIAL_MATERIAL", "PROJECTS_ENDEAVORS"),
        "home projects",
        "Is planning to renovate the kitchen",
        "Shelved the kitchen remodel after a {amount} quote",
        "we're finally redoing the kitchen, I have a moodboard",
        "kitchen remodel cancelled. they quoted {amount}, absolutely not",
        "picking tiles for the kitchen, home improvements are addictive",
        ("Is {first} getting any home improvements done?",),
        "No: the remodel was shelved over the quote",
        "renovate",
        True,
        "How much would the home makeover have cost {first}?",
        "{amount}",
    ),
    RetractionKind(
        "sabbatical",
        ("PROJECTS_ENDEAVORS", "PREFERENCES_HABITS"),
        "big plans",
        "Wants to take a three-month sabbatical to travel",
        "Scrapped the sabbatical idea; too much going on at work",
        "I'm asking for a three-month sabbatical to go travelling",
        "forget the sabbatical, work is too busy this year",
        "researching backpacks for my extended break from the job, so many straps",
        ("Does {first} have an extended break from the job lined up?",),
        "No: the sabbatical was scrapped",
        "sabbatical",
    ),
)

# --------------------------------------------------------------------------- tentative


@dataclass(frozen=True)
class TentativeKind:
    """An existing value plus a tentative, unconfirmed alternative (AV9, confidence 0.4).
    ``blocks``: a slot kind whose use elsewhere in the persona rules this one out."""

    slot: str
    categories: tuple[str, str]
    topic: str
    existing: str
    tentative: str
    say_existing: str
    say_tentative: str
    question: tuple[str, ...]
    answer: str
    blocks: str = ""


TENTATIVE_KINDS: tuple[TentativeKind, ...] = (
    TentativeKind(
        "living_arrangement",
        ("RELATIONAL_BONDS", "LOGISTICAL_CONTEXT"),
        "relationship",
        "Lives alone in a one-bedroom flat",
        "Might move in with {partner} next spring, nothing decided",
        "living alone in my one-bedroom is honestly bliss",
        "{partner} floated moving in together next spring. I don't know yet",
        ("Who shares a home with {first}?",),
        "Lives alone; considering moving in with {partner}",
    ),
    TentativeKind(
        "career_path",
        ("PROJECTS_ENDEAVORS", "IDENTITY_SELF_CONCEPT"),
        "career musings",
        "Is happy in a salaried {prof} job",
        "Toying with going freelance, undecided",
        "I actually like having a steady salaried job, no drama",
        "part of me wants to go freelance. maybe? not sure",
        ("Is {first} self-employed?",),
        "Salaried for now; considering freelancing",
    ),
    TentativeKind(
        "home_city",
        ("LOGISTICAL_CONTEXT", "IDENTITY_SELF_CONCEPT"),
        "life direction",
        "Has lived in {city} for years",
        "Thinking about relocating to {city2}, maybe",
        "I've been in {city} so long it's just home",
        "what if I moved to {city2}? just thinking out loud",
        ("Where does {first} reside?",),
        "{city}, possibly moving to {city2}",
        blocks="city_of_residence",
    ),
    TentativeKind(
        "car_ownership",
        ("FINANCIAL_MATERIAL", "LOGISTICAL_CONTEXT"),
        "budgeting",
        "Doesn't own a car",
        "Might buy a used car if the commute gets worse",
        "no car, never needed one, the bus is fine",
        "might get a used car if this commute keeps being awful",
        ("Does {first} have a motor vehicle?",),
        "No car yet; considering buying a used one",
        blocks="vehicle",
    ),
)

# --------------------------------------------------------------------------- annotated details


@dataclass(frozen=True)
class DetailKind:
    """A detail the conversations state (role ``annotated``): numbers (AV8) or hobbies (AV5)."""

    key: str
    categories: tuple[str, str]
    fact: str
    say: str
    question: str
    answer: str
    numeric: bool


NUMERIC_DETAILS: tuple[DetailKind, ...] = (
    DetailKind(
        "rent",
        ("FINANCIAL_MATERIAL", "LOGISTICAL_CONTEXT"),
        "Pays {amount} a month in rent",
        "rent is {amount} a month, which is insane for what it is",
        "How much does {first} spend on housing monthly?",
        "{amount} per month",
        True,
    ),
    DetailKind(
        "savings",
        ("FINANCIAL_MATERIAL", "PROJECTS_ENDEAVORS"),
        "Has {amount} put aside as an emergency fund",
        "finally hit {amount} in my emergency fund",
        "How big is {first}'s rainy-day cushion?",
        "{amount}",
        True,
    ),
    DetailKind(
        "commute",
        ("LOGISTICAL_CONTEXT", "PREFERENCES_HABITS"),
        "The commute takes {n} minutes each way",
        "{n} minutes door to door, every single day",
        "How long is {first}'s trip to work?",
        "{n} minutes each way",
        True,
    ),
    DetailKind(
        "ten_k",
        ("HOBBIES_RECREATION", "HEALTH_WELLBEING"),
        "Best 10 km time is {n} minutes",
        "new personal best on the 10k, {n} minutes flat",
        "What's {first}'s personal record over ten kilometres?",
        "{n} minutes",
        True,
    ),
    DetailKind(
        "plants",
        ("HOBBIES_RECREATION", "PREFERENCES_HABITS"),
        "Keeps {n} houseplants",
        "counted my houseplants, it's {n}. is that too many",
        "How many potted greens does {first} look after?",
        "{n}",
        True,
    ),
    DetailKind(
        "loan",
        ("FINANCIAL_MATERIAL", "IDENTITY_SELF_CONCEPT"),
        "Still owes {amount} on student loans",
        "{amount} left on the student loan, slowly chipping away",
        "How much education debt does {first} carry?",
        "{amount}",
        True,
    ),
)

HOBBY_DETAILS: tuple[DetailKind, ...] = (
    DetailKind(
        "choir",
        ("HOBBIES_RECREATION", "RELATIONAL_BONDS"),
        "Sings alto in a community choir",
        "choir rehearsal ran late, my voice is gone",
        "",
        "sings in a community choir",
        False,
    ),
    DetailKind(
        "allotment",
        ("HOBBIES_RECREATION", "HEALTH_WELLBEING"),
        "Keeps an allotment and grows squash and beans",
        "spent the afternoon weeding the allotment, the squash is taking over",
        "",
        "keeps an allotment",
        False,
    ),
    DetailKind(
        "birding",
        ("HOBBIES_RECREATION", "INTELLECTUAL_INTERESTS"),
        "Goes birdwatching at the reservoir on Sunday mornings",
        "saw a heron at the reservoir this morning, binoculars paid off",
        "",
        "birdwatching",
        False,
    ),
    DetailKind(
        "board_games",
        ("HOBBIES_RECREATION", "RELATIONAL_BONDS"),
        "Hosts a weekly board game night",
        "board game night got heated, never playing that trading one again",
        "",
        "hosts board game nights",
        False,
    ),
    DetailKind(
        "sourdough",
        ("HOBBIES_RECREATION", "PREFERENCES_HABITS"),
        "Bakes sourdough every weekend",
        "my sourdough starter survived the week, loaf is proving now",
        "",
        "bakes sourdough",
        False,
    ),
    DetailKind(
        "chess",
        ("HOBBIES_RECREATION", "INTELLECTUAL_INTERESTS"),
        "Plays online chess most evenings",
        "lost three chess games in a row tonight, I blame the coffee",
        "",
        "plays chess",
        False,
    ),
)

HOBBY_MENTIONS: dict[str, tuple[str, ...]] = {
    "choir": (
        "we're learning a new piece for the spring concert, the harmonies are brutal",
        "any tips for warming up the voice before rehearsal?",
    ),
    "allotment": (
        "slugs ate half my beans, what actually works against them?",
        "is it too late to plant garlic this month?",
    ),
    "birding": ("spotted a kingfisher near the water, first one this year", "which field guide is best for waders?"),
    "board_games": (
        "need a cooperative game for six people that isn't too long",
        "someone spilled crisps in my favourite box, I'm still upset",
    ),
    "sourdough": (
        "my crumb is too tight, is it hydration or proofing?",
        "gave a loaf to the neighbours, they asked for the recipe",
    ),
    "chess": ("finally learned a decent response to the Sicilian", "should I study endgames or openings first?"),
}

BROAD_QUESTIONS: tuple[str, ...] = (
    "What does {first} get up to when off the clock?",
    "How does {first} unwind outside of the job?",
    "What keeps {first} busy on evenings and weekends?",
)

# --------------------------------------------------------------------------- conversation filler

FILLER_TOPICS: dict[str, tuple[str, ...]] = {
    "meal ideas for a busy week": (
        "I need five dinners that take under twenty minutes, go",
        "what can I do with half a cabbage and some rice?",
        "is it safe to freeze cooked rice or is that a myth?",
        "honestly I just want something warm and low effort",
    ),
    "movie night picks": (
        "looking for a slow, moody film for a rainy evening",
        "something funny but not stupid, if that exists",
        "I fell asleep halfway through the last one you suggested, ha",
        "does anyone actually like three hour films?",
    ),
    "laptop running slow": (
        "my laptop fan sounds like a jet engine, what's going on",
        "should I just reinstall everything or is that overkill?",
        "how many browser tabs is too many, be honest",
        "ok closing 40 tabs now, wish me luck",
    ),
    "gift for a friend": (
        "my friend's birthday is soon and she has everything already",
        "budget is about forty, something thoughtful not random",
        "is a voucher lazy or practical?",
        "she likes tea and crosswords if that helps",
    ),
    "houseplant troubles": (
        "the leaves on my fern are going crispy at the edges",
        "is it overwatering or underwatering, they look the same to me",
        "should I repot in winter or wait?",
        "there are tiny flies in the soil, gross",
    ),
    "weekend trip ideas": (
        "want a cheap getaway reachable by train, two nights max",
        "somewhere with good walks and a decent pub",
        "is it worth going if the forecast says rain all weekend?",
        "I always overpack, give me a minimal list",
    ),
    "budget spreadsheet": (
        "trying to make a budget spreadsheet that I'll actually use",
        "how do I categorise random small purchases without going mad?",
        "is the 50/30/20 rule realistic for normal people?",
        "subscriptions are eating me alive, how do I audit them",
    ),
    "podcast recommendations": (
        "need a podcast for long walks, nothing true crime",
        "something about history but told like a story",
        "I like hosts who don't laugh at their own jokes",
        "how do people listen at 2x speed, it stresses me out",
    ),
    "noisy neighbours": (
        "the people upstairs move furniture at midnight, what are they doing",
        "how do I bring it up without starting a feud?",
        "earplugs are not a long term solution, right?",
        "wrote a polite note, deleted it, wrote it again",
    ),
    "writing an awkward email": (
        "need to decline an invitation without sounding rude",
        "can you make this sound less passive aggressive",
        "shorter please, nobody reads long emails",
        "ok sending it before I overthink it",
    ),
    "rainy day boredom": (
        "it's been raining all day and I'm going stir crazy",
        "give me indoor ideas that aren't just scrolling",
        "I could clean but I don't want to, obviously",
        "maybe I'll finally sort the sock drawer, thrilling",
    ),
    "random science question": (
        "why does the sky look white near the horizon?",
        "do fish get thirsty, is that a dumb question",
        "how do bees decide where to build a hive?",
        "ok that's oddly fascinating, tell me more",
    ),
}

FOLLOW_UPS: tuple[str, ...] = (
    "haha fair enough",
    "ok that makes sense, what else?",
    "can you make that shorter?",
    "hmm not sure about that one",
    "oh interesting, I didn't know that",
    "right, and what if it doesn't work?",
    "that's helpful, thanks",
    "wait, can you explain the second part again?",
    "lol ok you've convinced me",
    "good point, I'll try that tonight",
    "any other options?",
    "I'll think about it",
)

CRITICAL_OPENERS: tuple[str, ...] = (
    "hey, got a minute? want to talk about {topic}",
    "ok so, {topic}. I need a sounding board",
    "quick one about {topic} before I forget",
    "can we talk {topic} for a bit",
)

ASSISTANT_LINES: tuple[str, ...] = (
    "Sure thing. Give me the details and we'll sort it out.",
    "That makes sense. Here are a few options you could try.",
    "Good question. The short answer is that it depends, but here's a rule of thumb.",
    "I hear you. Let's break it into smaller steps.",
    "That sounds like a lot. What matters most to you here?",
    "Here's a quick list to start with; tell me which ones appeal.",
    "Totally reasonable. One thing that often helps is to start small.",
    "Got it. I'd suggest keeping it simple for now.",
    "Nice! That's worth celebrating.",
    "Fair point. Another angle is to think about what you'd do differently next time.",
)

#: Hard distractors for the non-slot question kinds, keyed by the kind's key (``calendar``: the
#: dated-items questions; ``free_time``: the broad query). Each line reuses the vocabulary of the
#: questions about that kind while saying nothing about the persona.
CHATTER: dict[str, tuple[str, ...]] = {
    "origin": (
        "my coworker keeps talking about her hometown festival, sounds fun",
        "what were the early years of the internet like, honestly?",
    ),
    "sibling": (
        "is it normal for immediate family to share one streaming account?",
        "my friend's siblings all have the same initials, is that a thing?",
    ),
    "condition": (
        "how do people keep medical issues in mind when planning a trek?",
        "what health concerns come up most for people who sit all day?",
    ),
    "education": (
        "is an academic background in the humanities useful these days?",
        "what did people major in before computers were everywhere?",
    ),
    "language": (
        "how many tongues can a person realistically converse in?",
        "is it true multilingual kids mix up their words?",
    ),
    "pet": ("how do zoos look after animals in winter?", "what's the weirdest creature people keep at home?"),
    "calendar": (
        "how do people keep a calendar without going mad?",
        "anything fun coming up in town for the long weekend?",
        "does anyone actually hit their deadlines, or is it all a lie?",
        "what appointments should a grown-up have scheduled every year?",
    ),
    "alcohol": ("what's a good teetotal option at a cocktail bar?", "why does alcohol make people so loud?"),
    "work_location": (
        "how do you set up a kitchen table desk that doesn't wreck your back?",
        "is remote work here to stay, what do you think?",
    ),
    "sleep": ("what sleeping hours do doctors actually recommend?", "how do night owl people survive early meetings?"),
    "cats": ("why do felines knock things off tables?", "are there cats that don't trigger allergies at all?"),
    "parties": (
        "how do you throw a big get-together on a tiny budget?",
        "small dinners or big parties, what's more fun?",
    ),
    "smoking": (
        "why is tobacco still so cheap in some countries?",
        "how long do lungs take to recover after someone quits smoking?",
    ),
    "puppy": (
        "which dog breeds are happiest in a small flat?",
        "why do people bring home a dog right before moving, chaos",
    ),
    "mba": ("is a business degree still worth it?", "why does everyone go back to school in their thirties?"),
    "marathon": ("how do long-distance race runners not get bored?", "what do people eat while preparing for a race?"),
    "renovation": ("which home improvements add the most value?", "why do all home makeover shows look the same?"),
    "sabbatical": (
        "do companies actually allow an extended break from the job?",
        "what would you do with a long break from the job?",
    ),
    "living_arrangement": ("who usually pays the bills when friends share a home?",),
    "career_path": ("how does tax work when you're self-employed?",),
    "home_city": ("where do most people reside after retiring?",),
    "car_ownership": ("is owning a motor vehicle in the city even worth it?",),
    "rent": ("is it normal to spend half your pay on housing?",),
    "savings": ("how big should a rainy-day cushion be, realistically?",),
    "commute": ("what do people do on a long trip to work, besides podcasts?",),
    "ten_k": ("what's a decent personal record for a beginner runner?",),
    "plants": ("which potted greens are impossible to kill?",),
    "loan": ("does education debt ever get forgiven anywhere?",),
    "free_time": (
        "what do people do off the clock when they have zero energy?",
        "how do you unwind after a long week without a screen?",
    ),
}
