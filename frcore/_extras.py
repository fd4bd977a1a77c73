"""The optional parts of frcore: each extra of ``pyproject.toml``, the modules it brings, and the one
message a command gives when its extra is not installed.

``pip install frcore`` installs the core (the kernels and the score, FR-Bank, LifecycleBench); an
extra adds what one feature imports, always inside the function that needs it (never at a core
module's top level: ``tests/test_packaging.py``). When it is missing, the feature says so in one
line, :func:`missing_extra_message`: ``fr serve needs the 'serve' extra: pip install 'frcore[serve]'``.
``fr`` gives that line for a subcommand whose extra is missing (:mod:`frcore.cli`), whether its
module checks with :func:`require` or an import inside it fails (:func:`extra_for_module`).

theory/, experiments/ and paper_figures/ are not in the wheel (:data:`CHECKOUT_PACKAGES`): their
subcommands run from a source checkout (:func:`checkout_message`).

Standard library only: ``frcore_warm`` and :mod:`frcore.cli` read it before anything is loaded.
"""

from __future__ import annotations

import importlib.util

#: extra → the top-level modules it brings that frcore imports (their distributions are the
#: extra's list in pyproject.toml; ``tests/test_packaging.py`` checks the two agree)
EXTRAS: dict[str, tuple[str, ...]] = {
    # fr serve: the MCP server (mcp brings the HTTP stack the server imports itself)
    "serve": ("mcp", "anyio", "pydantic", "starlette", "uvicorn"),
    # --scheduler ADDRESS: tasks on a Dask cluster
    "cluster": ("dask", "distributed"),
    # the approximate nearest-neighbour index (Bank.open(..., ann=True), fr bank query --ann)
    "ann": ("faiss",),
    # theory/, experiments/, paper_figures/ and frcore.symbolic
    "experiments": ("cvxpy", "sympy", "matplotlib", "numba", "hypothesis"),
}

#: the top-level packages of a source checkout that the wheel leaves out (generic names)
CHECKOUT_PACKAGES = ("theory", "experiments", "paper_figures")


class MissingExtra(ImportError):
    """A feature was used without the extra that brings its modules (the message says which)."""


def missing_extra_message(what: str, extra: str) -> str:
    """``WHAT needs the 'EXTRA' extra: pip install 'frcore[EXTRA]'`` (the one form of the message)."""
    if extra not in EXTRAS:
        raise ValueError(f"no extra {extra!r}: one of {', '.join(EXTRAS)}")
    return f"{what} needs the '{extra}' extra: pip install 'frcore[{extra}]'"


def checkout_message(what: str, package: str) -> str:
    """The line for a subcommand whose package is one of :data:`CHECKOUT_PACKAGES`, run from a wheel."""
    return (
        f"{what} runs from a source checkout of frcore (`make setup` there): "
        f"the installed package does not include {package}/"
    )


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here (found without importing them)."""
    if extra not in EXTRAS:
        raise ValueError(f"no extra {extra!r}: one of {', '.join(EXTRAS)}")
    return [m for m in EXTRAS[extra] if importlib.util.find_spec(m) is None]


def require(extra: str, what: str) -> None:
    """Raise :class:`MissingExtra` (:func:`missing_extra_message`) unless every module of ``extra``
    can be imported; imports none of them."""
    if missing(extra):
        raise MissingExtra(missing_extra_message(what, extra))


def extra_for_module(name: str | None) -> str | None:
    """The extra that brings module ``name`` (a dotted name: its top level counts), or ``None``."""
    top = (name or "").split(".")[0]
    return next((extra for extra, modules in EXTRAS.items() if top in modules), None)


def explain_import_error(error: BaseException, what: str) -> str | None:
    """One line for an import that failed because an extra or a checkout package is missing
    (:class:`MissingExtra`'s own message, :func:`missing_extra_message`, :func:`checkout_message`);
    ``None`` for any other error."""
    if isinstance(error, MissingExtra):
        return str(error)
    if not isinstance(error, ModuleNotFoundError):
        return None
    extra = extra_for_module(error.name)
    if extra is not None:
        return missing_extra_message(what, extra)
    top = (error.name or "").split(".")[0]
    if top in CHECKOUT_PACKAGES:
        return checkout_message(what, top)
    return None
