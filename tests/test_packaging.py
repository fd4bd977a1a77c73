"""Packaging: ``pip install frcore`` installs the core only, every optional part is an extra, and the
wheel holds ``frcore`` and ``frcore_warm`` only (no generic top-level names such as ``theory``).

Read from ``pyproject.toml`` and from the source with :mod:`ast` (nothing of frcore is imported but
:mod:`frcore._extras` and :mod:`frcore.cli`):

- the core's dependencies hold no distribution of an extra;
- every third-party module imported at the top level of a core module (anything of ``frcore/`` and
  ``frcore_warm/`` but :data:`EXTRA_MODULES`) comes from a core dependency: an extra's module is
  imported inside the function that needs it;
- :data:`frcore._extras.EXTRAS` and pyproject's extras agree, and ``all`` is every extra;
- the wheel's package patterns leave out theory/, experiments/ and paper_figures/.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import re
import sys
from collections.abc import Mapping
from importlib.metadata import EntryPoint, PackageNotFoundError, packages_distributions, requires
from pathlib import Path

import pytest
from support.paths import ROOT

from frcore import _extras, cli

ROOT = ROOT
#: the packages the wheel installs
WHEEL_PACKAGES = ("frcore", "frcore_warm")
#: the modules of frcore that belong to an extra (importing one needs it); every other module is core.
#: A core module imports none of these at its top level.
EXTRA_MODULES = {
    "frcore.bank._serve_models": "serve",  # the MCP tools' pydantic models (frcore.bank.serve imports them lazily)
    "frcore.symbolic": "experiments",  # the score in SymPy (tests and docs/score.md)
}
#: extras that are no feature of frcore (tools for the checkout), and the one that is every feature
NOT_FEATURES = {"dev", "test"}
ALL = "all"


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _dist(requirement: str) -> str:
    """The normalised distribution name of a requirement (``faiss-cpu>=1.9`` → ``faiss-cpu``)."""
    name = re.split(r"[\s<>=!~;\[(]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def _core() -> set[str]:
    return {_dist(r) for r in _pyproject()["project"]["dependencies"]}


def _extra(name: str) -> set[str]:
    return {_dist(r) for r in _pyproject()["project"]["optional-dependencies"][name]}


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def top_level_imports(tree: ast.Module, module: str) -> list[tuple[str, int]]:
    """The absolute modules ``module`` imports when it is imported: at its top level, in ``if``,
    ``try`` and ``with`` blocks and class bodies, not in functions nor under ``if TYPE_CHECKING``
    (relative imports resolved)."""
    out: list[tuple[str, int]] = []
    package = module.split(".") if (ROOT / module.replace(".", "/")).is_dir() else module.split(".")[:-1]

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import):
                out.extend((a.name, node.lineno) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                name = ".".join([*base, *([node.module] if node.module else [])])
                out.append((name, node.lineno))
                out.extend((f"{name}.{a.name}", node.lineno) for a in node.names)  # `from . import x`: a module
            elif isinstance(node, ast.If):
                if not _is_type_checking(node.test):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                    visit(block)
            elif isinstance(node, (ast.With, ast.ClassDef)):
                visit(node.body)

    visit(tree.body)
    return out


def _modules() -> dict[str, ast.Module]:
    return {
        _module(p): ast.parse(p.read_text(encoding="utf-8"), filename=str(p))
        for package in WHEEL_PACKAGES
        for p in sorted((ROOT / package).rglob("*.py"))
    }


def _third_party(name: str) -> str | None:
    top = name.split(".")[0]
    return None if top in WHEEL_PACKAGES or top in sys.stdlib_module_names or top == "__future__" else top


@functools.cache
def _packages() -> Mapping[str, list[str]]:
    """Top-level module → distributions (read once: every call walks every installed package)."""
    return packages_distributions()


def _distributions(top: str) -> set[str]:
    found = _packages().get(top)
    assert found, f"module {top!r} comes from no installed distribution: install the project (`make setup`)"
    return {_dist(d) for d in found}


def _brought(dists: set[str]) -> set[str]:
    """``dists`` and the distributions they require (one level: mcp brings uvicorn)."""
    out = set(dists)
    for d in dists:
        try:
            out |= {_dist(r) for r in requires(d) or () if "extra ==" not in r}
        except PackageNotFoundError:
            pass
    return out


def core_import_problems(modules: dict[str, ast.Module]) -> list[str]:
    """Every top-level import of a core module that the core's dependencies do not bring, and
    every top-level import of a module of :data:`EXTRA_MODULES` by a core module."""
    core = _core()
    problems = []
    for module, tree in modules.items():
        if module in EXTRA_MODULES:
            continue
        for name, line in top_level_imports(tree, module):
            if name in EXTRA_MODULES:
                problems.append(f"{module}:{line} imports {name} (the {EXTRA_MODULES[name]!r} extra's) at top level")
            top = _third_party(name)
            if top is not None and not _distributions(top) & core:
                extra = _extras.extra_for_module(top)
                problems.append(
                    f"{module}:{line} imports {top} at top level, which the core's dependencies do not install"
                    + (f" (it is the {extra!r} extra's: import it inside the function that needs it)" if extra else "")
                )
    return problems


def test_core_installs_no_extra():
    core = _core()
    optional = set().union(*(_extra(e) for e in _extras.EXTRAS))
    assert not core & optional, f"core dependencies that are an extra's: {sorted(core & optional)}"
    named = {"numba", "cvxpy", "matplotlib", "dask", "distributed", "faiss-cpu", "mcp", "sympy", "uvicorn"}
    assert not core & named, sorted(core & named)


def test_core_modules_import_only_core_dependencies_at_top_level():
    assert core_import_problems(_modules()) == []


def test_a_top_level_import_of_an_extra_in_a_core_module_is_found():
    modules = _modules()
    bad = dict(modules)
    bad["frcore.bank.records"] = ast.parse(
        "import matplotlib.pyplot as plt\n" + ast.unparse(modules["frcore.bank.records"])
    )
    assert any(
        "frcore.bank.records:1 imports matplotlib" in p and "'experiments'" in p for p in core_import_problems(bad)
    )
    lazy = dict(modules)
    lazy["frcore.bank.records"] = ast.parse("def f():\n    import matplotlib\n\nif TYPE_CHECKING:\n    import mcp\n")
    assert core_import_problems(lazy) == []
    pulled = dict(modules)
    pulled["frcore.bank.serve"] = ast.parse("from ._serve_models import At\n")
    assert any("imports frcore.bank._serve_models" in p for p in core_import_problems(pulled))


def test_modules_of_an_extra_import_only_the_core_and_that_extra():
    modules = _modules()
    core = _core()
    for module, extra in EXTRA_MODULES.items():
        assert module in modules, f"EXTRA_MODULES names {module}, which is no module"
        for name, line in top_level_imports(modules[module], module):
            top = _third_party(name)
            if top is not None and not _distributions(top) & core:
                assert top in _extras.EXTRAS[extra], f"{module}:{line} imports {top}, not of the {extra!r} extra"


def test_extras_agree_with_pyproject():
    declared = _pyproject()["project"]["optional-dependencies"]
    assert set(declared) == set(_extras.EXTRAS) | NOT_FEATURES | {ALL}
    assert {_dist(r) for r in declared[ALL]} == {"frcore"}
    listed = re.search(r"\[(.*)\]", declared[ALL][0])
    assert listed and {e.strip() for e in listed.group(1).split(",")} == set(_extras.EXTRAS)
    for extra, modules in _extras.EXTRAS.items():
        brought = _brought(_extra(extra))
        for top in modules:
            assert _distributions(top) & brought, f"the {extra!r} extra does not install module {top!r}"


def test_the_wheel_leaves_out_generic_top_level_packages():
    meta = _pyproject()
    include = meta["tool"]["setuptools"]["packages"]["find"]["include"]
    checkout = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file() and p.name not in WHEEL_PACKAGES)
    assert checkout == sorted(_extras.CHECKOUT_PACKAGES), "a new top-level package: add it to CHECKOUT_PACKAGES"
    for name in [*checkout, *(f"{c}.sub" for c in checkout)]:
        assert not any(fnmatch.fnmatchcase(name, pat) for pat in include), f"the wheel would install {name}"
    for name in ["frcore", "frcore.bank", "frcore.bank.storage", "frcore_warm"]:
        assert any(fnmatch.fnmatchcase(name, pat) for pat in include), f"the wheel would leave out {name}"
    assert not set(meta["tool"]["setuptools"].get("package-data", {})) & set(checkout)


def test_missing_extra_message():
    assert (
        _extras.missing_extra_message("fr serve", "serve")
        == "fr serve needs the 'serve' extra: pip install 'frcore[serve]'"
    )
    with pytest.raises(ValueError):
        _extras.missing_extra_message("fr serve", "servers")
    err = ModuleNotFoundError("No module named 'dask'", name="dask.distributed")
    assert _extras.explain_import_error(err, "fr bench") == _extras.missing_extra_message("fr bench", "cluster")
    assert _extras.explain_import_error(ModuleNotFoundError("x", name="theory"), "fr theory").startswith(
        "fr theory runs from a source checkout"
    )
    assert _extras.explain_import_error(ModuleNotFoundError("x", name="nothing_known"), "fr x") is None
    assert _extras.explain_import_error(ValueError("x"), "fr x") is None


def test_a_subcommand_without_its_extra_says_which_in_one_line(monkeypatch, capsys):
    monkeypatch.setitem(_extras.EXTRAS, "serve", ("frcore_no_such_module",))
    line = "fr serve needs the 'serve' extra: pip install 'frcore[serve]'"
    _, failed = cli.build_parser([EntryPoint("serve", "frcore.bank.serve:register", cli.ENTRY_POINT_GROUP)])
    assert [f.line for f in failed] == [line]
    assert cli.main(["serve", "--help"]) == cli.EXIT_UNAVAILABLE
    assert capsys.readouterr().err == line + "\n"


def test_a_checkout_subcommand_from_a_wheel_says_so(monkeypatch, capsys):
    monkeypatch.setattr(_extras, "CHECKOUT_PACKAGES", ("frcore_no_such_module",))
    ep = EntryPoint("ghost", "frcore_no_such_module.run:register", cli.ENTRY_POINT_GROUP)
    parser, failed = cli.build_parser([ep])
    assert len(failed) == 1 and failed[0].line is not None
    assert failed[0].line.startswith("fr ghost runs from a source checkout of frcore")
    with pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    assert "UNAVAILABLE — fr ghost runs from a source checkout" in capsys.readouterr().out
