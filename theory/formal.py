"""The formal (corpus-free) claims of appendix A in one import.

Importing this module registers ``thm1``, ``thm2``, ``thm3p``, ``thm3pp``, ``a13_anticipation``
(:mod:`theory.witnesses`) and ``eps_relax``, ``entropy_corollary``, ``a6_identity``,
``a11_dimension``, ``a12_decomposition``, ``a14_lemma1`` (:mod:`theory.identities`).
"""

from __future__ import annotations

from . import identities as identities, witnesses as witnesses

#: The claim ids this module registers, in the paper's order.
FORMAL_CLAIMS: tuple[str, ...] = (
    "thm1",
    "thm2",
    "thm3p",
    "thm3pp",
    "eps_relax",
    "entropy_corollary",
    "a6_identity",
    "a11_dimension",
    "a12_decomposition",
    "a13_anticipation",
    "a14_lemma1",
)
