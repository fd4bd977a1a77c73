"""The lifecycle log-score in symbolic form: one SymPy expression for each named term.

Each term of :class:`frcore.ScoreTerms` (and the two helpers behind them, the anticipatory
kernel and the state the mask sees) is written here once, as a SymPy expression in the inputs
and in the symbols of the terms before it (:data:`FORMULAS`, in dependency order). The total is
built as the sum of :data:`frcore._types.SCORE_SUMMANDS`, the kernel's own list of summands.
These expressions are used three ways:

- the docstrings of the kernels in :mod:`frcore._scoring` quote :func:`equation` of their term
  (a test keeps the text in sync);
- ``docs/score.md`` renders :func:`markdown` (LaTeX generated from the expressions; a test
  checks that the page holds what this module renders now);
- :func:`evaluate` ``lambdify``-s every expression (with the earlier terms substituted, so it
  depends on the inputs only) into a third oracle, checked against the JAX kernels and the
  NumPy twin on hypothesis inputs (``tests/core/test_symbolic_oracle.py``).

The forms are those of the default :class:`frcore.ScoreConfig` (every switch of the full
score on; the ablations are the kernels' structural switches, not separate formulas), with one
switch written as a symbol: U = ``config.untyped_upcoming`` (false by default), under which
``upcoming`` admits an untyped edge (T false) without an event ahead. Two things
stay outside the algebra and are inputs: the primary category p = argmax_c w_c (first on ties),
whose α, F and clock row the blend and the age use, and the compatibility table K(ι, ξ) =
:data:`frcore.COMPATIBLE`. A padding row (``valid`` false) is no candidate and has no formula.

SymPy is imported with this module only; ``import frcore`` does not import it (it is the
``experiments`` extra: without it, importing this module raises :class:`frcore._extras.MissingExtra`).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from ._extras import MissingExtra, missing_extra_message

try:
    import sympy as sp
except ModuleNotFoundError as e:  # SymPy is the 'experiments' extra
    raise MissingExtra(missing_extra_message("frcore.symbolic", "experiments")) from e

from ._ontology import primary_index
from ._params import MIN_BLEND, MIN_SUPERSESSION_WEIGHT, LifecycleParams
from ._types import COMPATIBLE, SCORE_SUMMANDS, Intent, ScoreConfig, State

# --------------------------------------------------------------------------- symbols

c = sp.Symbol("c", integer=True)  # category index of the sums, 1..C
C = sp.Symbol("C", integer=True, positive=True)  # number of categories
w = sp.IndexedBase("w")  # soft category weights of the edge
lam = sp.IndexedBase("lambda")  # decay rate λ_c per hour (params.rates)
r = sp.IndexedBase("r")  # routing weights of the query

t_abs, t_inter, n_conv = sp.symbols("t_abs t_inter n_conv")  # ages on the three clocks
s_abs, s_inter, s_conv = sp.symbols("s_abs s_inter s_conv")  # clock sensitivities of the primary category
h_msg = sp.Symbol("h_msg")  # hours per conversational message
h, E = sp.symbols("h E")  # hours to the event (> 0: ahead), the edge has an event time
# window, ramp start, peak, post-event decay, staleness floor
W, a_0, a_1, d, f_stale = sp.symbols("W a_0 a_1 d f_stale")
sigma, nu = sp.symbols("sigma nu")  # similarity σ, the edge is numeric
alpha_p, F_p = sp.symbols("alpha_p F_p")  # α and semantic floor F of the primary category
theta_F, theta_num, rho = sp.symbols("theta_F theta_num rho")  # floor threshold, numeric threshold, numeric rescue
b_min, beta = sp.symbols("b_min beta")  # clip of b before the log, routing boost β
kappa, omega_min, omega_num = sp.symbols("kappa omega_min omega_num")  # confidence, clip of ω, ω_num
xi, iota = sp.symbols("xi iota")  # lifecycle state ξ, query intent ι
T, U = sp.symbols("T U")  # the edge is typed (carries lifecycle metadata), the switch config.untyped_upcoming
#: the state and intent codes the formulas name (values: frcore.State, frcore.Intent)
active, contested, superseded, expired, upcoming = sp.symbols("active contested superseded expired upcoming")
CODES: dict[sp.Symbol, int] = {
    active: int(State.ACTIVE),
    contested: int(State.CONTESTED),
    superseded: int(State.SUPERSEDED),
    expired: int(State.EXPIRED),
    upcoming: int(Intent.UPCOMING),
}
_DEFAULT = ScoreConfig()
#: K(ι, ξ) = 1 when intent ι admits state ξ: the table :data:`frcore.COMPATIBLE`
K = sp.Function("K")

# the symbols of the terms (left-hand sides); the summands carry the names of ScoreTerms' fields
lambda_eff, age_eff, a_ev, a, b, xi_m, s = sp.symbols("lambda_eff age_eff a_ev a b xi_m s")
log_blend, routing, supersession, mask, exemption = sp.symbols(list(SCORE_SUMMANDS))


@dataclass(frozen=True)
class Formula:
    """One named term: ``symbol = expr``, computed by the kernel ``frcore.<kernel>``."""

    name: str  # the ScoreTerms field (or "anticipatory", "mask_state")
    symbol: sp.Symbol
    expr: sp.Expr
    kernel: str  # the frcore kernel that computes it (its docstring quotes :func:`equation`)
    meaning: str


def _stale(state: sp.Symbol) -> sp.Basic:
    return sp.Eq(state, superseded) | sp.Eq(state, expired)


#: every named term, in dependency order (each expression uses only inputs and earlier terms)
FORMULAS: dict[str, Formula] = {
    f.name: f
    for f in (
        Formula(
            "rate",
            lambda_eff,
            sp.Sum(w[c], (c, 1, C)) / sp.Sum(w[c] / lam[c], (c, 1, C)),
            "effective_rate",
            "effective decay rate per hour: harmonic mean of the category rates under the soft weights (Lemma 1)",
        ),
        Formula(
            "age",
            age_eff,
            s_abs * t_abs + s_inter * t_inter + s_conv * h_msg * n_conv,
            "effective_age",
            "effective age in hours over the three clocks, with the primary category's sensitivities",
        ),
        Formula(
            "anticipatory",
            a_ev,
            sp.Piecewise(
                (a_0 + (a_1 - a_0) * (1 - h / W), h >= 0),  # ramp up to the event
                (0, a_1 * sp.exp(-d * (-h)) < f_stale),  # after it, below the staleness floor
                (a_1 * sp.exp(-d * (-h)), True),
            ),  # post-event decay
            "anticipatory_activation",
            "anticipatory kernel: ramp before the event, decay after it, 0 below the floor",
        ),
        Formula(
            "activation",
            a,
            sp.Piecewise((a_ev, E & (h <= W)), (sp.exp(-lambda_eff * age_eff), True)),
            "activation",
            "activation: the anticipatory kernel for an event at most W hours ahead (or past), else exponential decay",
        ),
        Formula(
            "blend",
            b,
            sp.Max(
                (1 - alpha_p) * sigma + alpha_p * a,
                sp.Piecewise((F_p * sigma, sigma >= theta_F), (0, True)),  # semantic floor
                sp.Piecewise((rho * sigma, nu & (sigma >= theta_num)), (0, True)),
            ),  # numeric rescue
            "blend",
            "blend of similarity and activation, with the semantic floor and the numeric rescue (b ≥ 0)",
        ),
        Formula("log_blend", log_blend, sp.log(sp.Max(b, b_min)), "score", "log of the blend, clipped below"),
        Formula(
            "routing",
            routing,
            sp.log(1 + beta * sp.Sum(w[c] * r[c], (c, 1, C))),
            "routing_term",
            "routing term: overlap of the edge's categories with the query's routing",
        ),
        Formula(
            "supersession",
            supersession,
            sp.Piecewise((sp.log(sp.Max(kappa, omega_min)), sp.Eq(xi, contested)), (0, True)),
            "supersession_term",
            "soft-supersession weight of a contested edge",
        ),
        Formula(
            "mask_state",
            xi_m,
            sp.Piecewise((active, nu & _stale(xi)), (xi, True)),
            "compatibility_mask",
            "the state the mask sees: a numeric superseded or expired edge counts as active (numeric exemption)",
        ),
        Formula(
            "mask",
            mask,
            sp.Piecewise(
                (0, sp.Eq(K(iota, xi_m), 1) & (sp.Ne(iota, upcoming) | (E & (h >= 0)) | (U & ~T))), (-sp.oo, True)
            ),
            "compatibility_mask",
            "compatibility mask: 0 if the intent admits the state (upcoming: an event ahead, or with U an"
            " untyped edge), else −∞",
        ),
        Formula(
            "exemption",
            exemption,
            sp.Piecewise((sp.log(sp.Max(omega_num, omega_min)), nu & _stale(xi) & sp.Eq(K(iota, xi), 0)), (0, True)),
            "exemption_term",
            "weight of a numeric edge admitted only through the numeric exemption",
        ),
        Formula(
            "total",
            s,
            sp.Add(*(sp.Symbol(name) for name in SCORE_SUMMANDS), evaluate=False),
            "score",
            "the lifecycle log-score: the sum of SCORE_SUMMANDS",
        ),
    )
}

#: the LaTeX of symbols whose default rendering reads badly
LATEX_NAMES: dict[sp.Symbol, str] = {
    age_eff: r"\mathrm{age}_{\mathrm{eff}}",
    lambda_eff: r"\lambda_{\mathrm{eff}}",
    a_ev: r"a_{\mathrm{ev}}",
    t_abs: r"t_{\mathrm{abs}}",
    t_inter: r"t_{\mathrm{inter}}",
    n_conv: r"n_{\mathrm{conv}}",
    s_abs: r"s_{\mathrm{abs}}",
    s_inter: r"s_{\mathrm{inter}}",
    s_conv: r"s_{\mathrm{conv}}",
    h_msg: r"h_{\mathrm{msg}}",
    f_stale: r"f_{\mathrm{stale}}",
    theta_num: r"\theta_{\mathrm{num}}",
    b_min: r"b_{\min}",
    omega_min: r"\omega_{\min}",
    omega_num: r"\omega_{\mathrm{num}}",
    xi_m: r"\xi_{m}",
    **{sym: rf"\mathrm{{{sym.name}}}" for sym in CODES},
    **{sp.Symbol(name): r"\mathrm{" + name.replace("_", r"\_") + "}" for name in SCORE_SUMMANDS},
}

#: where the value of each input symbol comes from (p: the primary category)
INPUTS: dict[str, str] = {
    "w[c]": "candidate weights (row of `weights`)",
    "lambda[c]": "`params.rates`",
    "r[c]": "query `routing`",
    "t_abs, t_inter, n_conv": "candidate `ages` (absolute h, inter-session h, messages)",
    "s_abs, s_inter, s_conv": "`params.clocks[p]`",
    "h_msg": "`params.hours_per_message`",
    "h": "candidate `hours_to_event`",
    "E": "candidate `has_event`",
    "T": "candidate `typed` (the edge carries lifecycle metadata: a fact, a slot, an event time or a link)",
    "U": "`ScoreConfig.untyped_upcoming` (the one switch that is a symbol; false by default)",
    "W": "`params.antic_window`",
    "a_0": "`params.antic_start`",
    "a_1": "`params.antic_peak`",
    "d": "`params.antic_post_decay`",
    "f_stale": "`params.staleness_floor`",
    "sigma": "candidate `sim`",
    "nu": "candidate `numeric`",
    "alpha_p": "`params.alpha[p]`",
    "F_p": "`params.floors[p]`",
    "theta_F": "`params.floor_sim_threshold`",
    "theta_num": "`params.numeric_sim_threshold`",
    "rho": "`params.numeric_rescue`",
    "b_min": "`MIN_BLEND` = 1e-12",
    "beta": "`params.routing_boost`",
    "kappa": "candidate `confidence`",
    "omega_min": "`MIN_SUPERSESSION_WEIGHT` = 1e-3",
    "omega_num": "`params.numeric_exempt_weight`",
    "xi": "candidate `state`",
    "iota": "query `intent`",
    "K(iota, xi)": "`frcore.COMPATIBLE[intent, state]` (1 or 0)",
    "active, contested, superseded, expired": "codes of `frcore.State`",
    "upcoming": "`frcore.Intent.UPCOMING`",
    "p": "the primary category argmax_c w[c], the first on ties (`frcore.primary_category`)",
    "C": "the number of categories, 11",
}


# --------------------------------------------------------------------------- rendering


def equation(name: str) -> str:
    """``symbol = expression`` of a term as SymPy's plain text (what the kernel docstrings quote)."""
    f = FORMULAS[name]
    return f"{sp.sstr(f.symbol)} = {sp.sstr(f.expr, order='none')}"


def latex(name: str) -> str:
    """``symbol = expression`` of a term in LaTeX (what docs/score.md renders)."""
    f = FORMULAS[name]
    lhs = sp.latex(f.symbol, symbol_names=LATEX_NAMES)
    return f"{lhs} = {sp.latex(f.expr, symbol_names=LATEX_NAMES, order='none')}"


def markdown() -> str:
    """The formulas as Markdown (the generated part of docs/score.md): one display-math block
    per term, then the table of input symbols."""
    out = []
    for f in FORMULAS.values():
        out += [f"`{f.name}` — {f.meaning} (`frcore.{f.kernel}`):", "", "$$", latex(f.name), "$$", ""]
    out += ["| symbol | value |", "|---|---|"]
    out += [f"| `{sym}` | {source} |" for sym, source in INPUTS.items()]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- numeric evaluation


def expression(name: str) -> sp.Expr:
    """A term with every earlier term substituted: an expression in the inputs only."""
    order = list(FORMULAS.values())
    out = FORMULAS[name].expr
    for f in reversed(order[: list(FORMULAS).index(name)]):
        out = out.subs(f.symbol, f.expr)
    return out


def _flat(i: int, base: sp.IndexedBase) -> sp.Symbol:
    return sp.Symbol(f"{base.name}__{i}")


@functools.cache
def _numeric(name: str, n_categories: int) -> tuple[Callable, tuple[sp.Symbol, ...]]:
    """The term lambdified for NumPy: (function, its argument symbols)."""
    expr = expression(name).subs(C, n_categories).doit().subs(CODES)
    expr = expr.replace(lambda e: isinstance(e, sp.Indexed), lambda e: _flat(int(e.indices[0]), e.base))
    # a condition on a Piecewise state (K(ι, ξ_m)) becomes ITE, which NumPy's printer writes as a
    # float select: its negation normal form is the same condition as booleans
    expr = expr.replace(lambda e: isinstance(e, sp.ITE), lambda e: e.to_nnf())
    args = tuple(sorted(expr.free_symbols, key=lambda x: x.name))
    return sp.lambdify(args, expr, modules=[{"K": _compatible}, "numpy"]), args


def _compatible(intent, state) -> np.ndarray:
    """K(ι, ξ) for the lambdified forms: :data:`frcore.COMPATIBLE` as 0 / 1."""
    return COMPATIBLE[np.asarray(intent, dtype=np.int64), np.asarray(state, dtype=np.int64)].astype(np.int64)


def inputs(params: LifecycleParams, query, cands, config: ScoreConfig = _DEFAULT) -> dict[str, np.ndarray]:
    """Every input symbol's value (float64, or bool / int) for the k candidate rows, from the
    kernel's own inputs (:class:`frcore.LifecycleParams`, :class:`frcore.Query`,
    :class:`frcore.Candidates`; JAX or NumPy leaves) and, for U, ``config.untyped_upcoming``.
    Every value has shape (k,)."""
    p = LifecycleParams(*(np.asarray(x, dtype=np.float64) for x in params))
    wts = np.asarray(cands.weights, dtype=np.float64)
    k, n_cat = wts.shape
    prim = primary_index(wts)
    ages = np.asarray(cands.ages, dtype=np.float64)

    def full(x):
        return np.broadcast_to(np.asarray(x, dtype=np.float64), (k,))

    out: dict = {
        "t_abs": ages[:, 0],
        "t_inter": ages[:, 1],
        "n_conv": ages[:, 2],
        "s_abs": p.clocks[prim, 0],
        "s_inter": p.clocks[prim, 1],
        "s_conv": p.clocks[prim, 2],
        "h_msg": full(p.hours_per_message),
        "h": np.asarray(cands.hours_to_event, dtype=np.float64),
        "E": np.asarray(cands.has_event, dtype=bool),
        "T": np.asarray(cands.typed, dtype=bool),
        "U": np.full(k, bool(config.untyped_upcoming)),
        "W": full(p.antic_window),
        "a_0": full(p.antic_start),
        "a_1": full(p.antic_peak),
        "d": full(p.antic_post_decay),
        "f_stale": full(p.staleness_floor),
        "sigma": np.asarray(cands.sim, dtype=np.float64),
        "nu": np.asarray(cands.numeric, dtype=bool),
        "alpha_p": p.alpha[prim],
        "F_p": p.floors[prim],
        "theta_F": full(p.floor_sim_threshold),
        "theta_num": full(p.numeric_sim_threshold),
        "rho": full(p.numeric_rescue),
        "b_min": full(MIN_BLEND),
        "beta": full(p.routing_boost),
        "kappa": np.asarray(cands.confidence, dtype=np.float64),
        "omega_min": full(MIN_SUPERSESSION_WEIGHT),
        "omega_num": full(p.numeric_exempt_weight),
        "xi": np.asarray(cands.state, dtype=np.int64),
        "iota": np.full(k, int(np.asarray(query.intent)), dtype=np.int64),
    }
    routing_w = np.asarray(query.routing, dtype=np.float64)
    for i in range(n_cat):  # the sums' index runs from 1
        out[_flat(i + 1, w).name] = wts[:, i]
        out[_flat(i + 1, lam).name] = full(p.rates[i])
        out[_flat(i + 1, r).name] = full(routing_w[i])
    return out


def evaluate(
    params: LifecycleParams, query, cands, names: Iterable[str] | None = None, config: ScoreConfig = _DEFAULT
) -> dict[str, np.ndarray]:
    """Every named term (or those in ``names``) for the k candidates of one query, computed
    from the SymPy expressions alone (float64): the third oracle of the score, under the
    default switches but for U (``config.untyped_upcoming``). Rows that are padding (``valid``
    false) are computed like any other; the kernels give them −∞."""
    values = inputs(params, query, cands, config)
    n_cat = np.asarray(cands.weights).shape[1]
    out = {}
    for name in FORMULAS if names is None else names:
        fn, args = _numeric(name, n_cat)
        with np.errstate(all="ignore"), warnings.catch_warnings():  # unselected Piecewise branches may overflow
            warnings.simplefilter("ignore", RuntimeWarning)
            out[name] = np.asarray(fn(*(values[a.name] for a in args)), dtype=np.float64)
    return out


if __name__ == "__main__":  # python -m frcore.symbolic: the Markdown of every formula (docs/score.md)
    print(markdown(), end="")


__all__ = [
    "CODES",
    "FORMULAS",
    "INPUTS",
    "LATEX_NAMES",
    "Formula",
    "equation",
    "evaluate",
    "expression",
    "inputs",
    "latex",
    "markdown",
]
