"""The import contract of the repository, read from the source with :mod:`ast` (nothing is imported).

Layers, bottom to top: ``frcore`` (with its subpackages ``frcore.bank`` and ``frcore.bench``, and
beside it ``frcore_warm``, the ``fr`` console script's warm path) ←
``theory`` ← ``experiments`` ← ``paper_figures``. Every import is read — at module level, inside
functions, and module names given as strings (``importlib.import_module("x.y")``, an f-string
whose literal head names a module, or any other string constant that is exactly the dotted name
of one of our modules, such as a table of subcommand modules) — and three rules are enforced:

1. **One direction**: no arrow from a lower layer to a higher one (``frcore`` imports nothing of
   theory/, experiments/ or paper_figures/).
2. **No cycles**: the graph between the packages ``frcore`` (its own modules), ``frcore.bank``,
   ``frcore.bench``, ``theory``, ``experiments`` and ``paper_figures`` is acyclic, counting every
   import (a lazy import inside a function is still a dependency). Between modules, no cycle at
   import time anywhere (module-level imports), and inside each of ``frcore``, ``theory`` and
   ``experiments`` none at all, lazy imports included (no two modules of one package need each
   other, directly or through others).
3. **No private imports across packages**: a module of one top-level package does not import a
   private module (a dotted-path component starting with ``_``, other than ``__init__`` /
   ``__future__``) or a private name of another top-level package, nor of a sibling subpackage
   (``frcore.bench`` reads ``frcore.bank`` through its public names only). A subpackage may
   import its own core's private modules (``frcore.bank`` importing ``frcore._ontology``);
   tests/ is not checked (tests test internals).

The reader (:func:`all_imports`) is tests/support/import_graph.py; tests/test_public_api.py uses it too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.import_graph import LAYERS, Import, all_imports, imports_of, source_files

#: the nodes of the package graph: subpackages are nodes of their own
SUBPACKAGES = ("frcore.bank", "frcore.bench")


def package_of(module: str) -> str:
    """The node of the package graph a module belongs to."""
    for sub in SUBPACKAGES:
        if module == sub or module.startswith(sub + "."):
            return sub
    return module.split(".")[0]


def top_of(module: str) -> str:
    return module.split(".")[0]


def _private(module: str) -> bool:
    return any(p.startswith("_") and p not in ("__init__", "__future__", "__main__") for p in module.split("."))


# --- the three rules, each returning its violations as readable lines ---------------------------


def layer_violations(imports: list[Import]) -> list[str]:
    return [
        f"{i.where()}: {top_of(i.importer)} (layer {LAYERS[top_of(i.importer)]}) imports {i.target} "
        f"(layer {LAYERS[top_of(i.target)]}, higher) [{i.kind}]"
        for i in imports
        if LAYERS[top_of(i.target)] > LAYERS[top_of(i.importer)]
    ]


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node, or with a self-loop (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    nodes = sorted(set(edges) | {b for bs in edges.values() for b in bs})

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in edges.get(v, ()):
                out.append(sorted(comp))

    for v in nodes:
        if v not in index:
            strong(v)
    return out


def package_cycle_violations(imports: list[Import]) -> list[str]:
    edges: dict[str, set[str]] = {}
    witness: dict[tuple[str, str], Import] = {}
    for i in imports:
        a, b = package_of(i.importer), package_of(i.target)
        if a != b:
            edges.setdefault(a, set()).add(b)
            witness.setdefault((a, b), i)
    out = []
    for comp in _cycles(edges):
        arrows = [
            f"{a} → {b} ({witness[a, b].where()} imports {witness[a, b].target})"
            for a in comp
            for b in sorted(edges.get(a, ()))
            if b in comp
        ]
        out.append(f"package cycle {' ⇄ '.join(comp)}: " + "; ".join(arrows))
    return out


def module_cycle_violations(
    imports: list[Import], modules: dict[str, Path] | None = None, lazy: bool = True
) -> list[str]:
    """Cycles between modules: at import time (module-level imports; importing ``a.b.c`` runs
    ``a`` and ``a.b`` first), and with ``lazy`` also counting imports inside functions (two
    modules that need each other, such as a CLI and the command it registers)."""
    modules = source_files() if modules is None else modules
    edges: dict[str, set[str]] = {}
    for i in imports:
        if not (i.module_level or lazy) or i.kind == "string":
            continue
        t = i.target
        while t and t not in modules:
            t = t.rpartition(".")[0]
        if not t:
            continue
        targets = {t} | {p for p in (".".join(t.split(".")[:k]) for k in range(1, t.count(".") + 1)) if p in modules}
        for t in targets:
            if t != i.importer and not i.importer.startswith(t + "."):  # a package's own __init__ runs first anyway
                edges.setdefault(i.importer, set()).add(t)
    return [f"import cycle between modules: {' ⇄ '.join(c)}" for c in _cycles(edges)]


def _siblings(importer: str, target: str) -> bool:
    """Two different subpackages of one top-level package (``frcore.bench`` and ``frcore.bank``)."""
    a, b = package_of(importer), package_of(target)
    return a != b and a in SUBPACKAGES and b in SUBPACKAGES


def private_violations(imports: list[Import]) -> list[str]:
    out = []
    for i in imports:
        if top_of(i.importer) == top_of(i.target) and not _siblings(i.importer, i.target):
            continue
        if _private(i.target):
            out.append(f"{i.where()}: imports private module {i.target} of {top_of(i.target)}")
        bad = [n for n in i.names if n.startswith("_") and n != "*"]
        if bad:
            out.append(f"{i.where()}: imports private name(s) {', '.join(bad)} of {i.target}")
    return out


# --- the tests ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    return all_imports()


def test_the_reader_sees_imports(imports):
    """The reader is not blind: it finds the arrows we know exist, of every kind."""
    seen = {(i.importer, i.target, i.kind) for i in imports}
    assert ("theory.partitions", "frcore", "from") in seen
    assert any(i.importer == "frcore.bench._systems" and i.target == "frcore._ontology" for i in imports)  # relative
    assert any(i.kind == "string" and i.importer == "theory.run" for i in imports)  # CLAIM_MODULES table
    assert any(
        i.kind == "string" and i.importer == "paper_figures.build" and i.target == "paper_figures" for i in imports
    )  # f-string
    assert any(not i.module_level for i in imports)
    assert len(source_files()) > 50


def test_frcore_imports_nothing_above_it(imports):
    assert not layer_violations(imports), "\n".join(layer_violations(imports))


def test_no_package_cycles(imports):
    v = package_cycle_violations(imports)
    assert not v, "\n".join(v)


def test_no_import_time_cycles(imports):
    v = module_cycle_violations(imports, lazy=False)
    assert not v, "\n".join(v)


#: the packages whose modules may not need each other even lazily (a cycle through a function-level import)
NO_LAZY_CYCLES = ("frcore", "theory", "experiments")


def lazy_cycle_violations(imports: list[Import], package: str, modules: dict[str, Path] | None = None) -> list[str]:
    """Cycles between the modules of one top-level package, lazy imports included."""
    return module_cycle_violations([i for i in imports if top_of(i.importer) == package], modules)


@pytest.mark.parametrize("package", NO_LAZY_CYCLES)
def test_no_module_cycles_in_package(imports, package):
    """Not even lazily: no two modules of frcore, of theory or of experiments need each other."""
    v = lazy_cycle_violations(imports, package)
    assert not v, "\n".join(v)


def test_no_private_imports_across_packages(imports):
    v = private_violations(imports)
    assert not v, "\n".join(v)


# --- the rules catch what they claim to (synthetic sources) ------------------------------------

_FAKE = {
    "frcore": "frcore/__init__.py",
    "frcore._x": "frcore/_x.py",
    "frcore.bank": "frcore/bank/__init__.py",
    "frcore.bank._b": "frcore/bank/_b.py",
    "frcore.bench": "frcore/bench/__init__.py",
    "frcore.bench.cli": "frcore/bench/cli.py",
    "frcore.bench.locomo": "frcore/bench/locomo.py",
    "theory": "theory/__init__.py",
    "theory.t": "theory/t.py",
    "theory.u": "theory/u.py",
    "experiments": "experiments/__init__.py",
    "experiments.e": "experiments/e.py",
    "experiments.f": "experiments/f.py",
}


def _fake(name: str, source: str) -> list[Import]:
    return imports_of(name, source, {k: Path(v) for k, v in _FAKE.items()})


@pytest.mark.parametrize(
    "source",
    [
        "import theory.t",
        "from theory import t",
        "def f():\n    from experiments.e import g\n",
        "import importlib\nimportlib.import_module('theory.t')",
        "import importlib\nname = 'x'\nimportlib.import_module(f'experiments.{name}')",
        "COMMANDS = {'theory': 'theory.t'}",
    ],
)
def test_layer_rule_catches(source):
    assert layer_violations(_fake("frcore._x", source))


def test_layer_rule_ignores_docstrings_and_allows_downward():
    assert not layer_violations(_fake("frcore._x", '"""Used by theory.t."""\nimport frcore.bank'))
    assert not layer_violations(_fake("experiments.e", "import theory.t\nfrom frcore import bank"))


def test_cycle_rules_catch():
    a = _fake("frcore.bank._b", "def f():\n    from frcore.bench import cli\n")
    b = _fake("frcore.bench.cli", "from ..bank import _b\n")
    assert package_cycle_violations(a + b) and not package_cycle_violations(b)
    c = _fake("theory.t", "from frcore import bench\n")
    d = _fake("frcore.bench.cli", "def f():\n    import theory.t\n")
    assert package_cycle_violations(c + d)


def test_module_cycle_rule_catches():
    fake = {k: Path(v) for k, v in _FAKE.items()}
    a = _fake("frcore.bench.cli", "from .locomo import register_locomo\n")
    b = _fake("frcore.bench.locomo", "from .cli import make_embedder\n")
    lazy = _fake("frcore.bench.locomo", "def f():\n    from .cli import make_embedder\n")
    assert module_cycle_violations(a + b, fake, lazy=False)
    assert module_cycle_violations(a + lazy, fake)  # the two need each other
    assert not module_cycle_violations(a + lazy, fake, lazy=False)  # but not at import time
    assert not module_cycle_violations(a, fake)


@pytest.mark.parametrize(
    ("package", "first", "second"),
    [
        ("theory", ("theory.t", "from .u import spot_check\n"), ("theory.u", "def f():\n    from .t import rule\n")),
        ("theory", ("theory.t", "from . import u\n"), ("theory.u", "def f():\n    import theory.t\n")),
        (
            "experiments",
            ("experiments.e", "from .f import build_table\n"),
            ("experiments.f", "def register():\n    from .e import register_grid\n"),
        ),
        (
            "frcore",
            ("frcore.bench.cli", "from .locomo import g\n"),
            ("frcore.bench.locomo", "def f():\n    from . import cli\n"),
        ),
    ],
    ids=["theory-from-name", "theory-import-module", "experiments-from-name", "frcore-from-submodule"],
)
def test_lazy_cycle_rule_catches(package, first, second):
    """A cycle closed by a function-level import, inside each package the rule covers (the shape
    of experiments.grid ⇄ experiments.sweeps and theory.proofs ⇄ theory.identities before they
    were broken); one direction alone is no cycle, and another package's cycle is not this one's."""
    fake = {k: Path(v) for k, v in _FAKE.items()}
    a, b = _fake(*first), _fake(*second)
    assert lazy_cycle_violations(a + b, package, fake)
    assert not lazy_cycle_violations(a, package, fake) and not lazy_cycle_violations(b, package, fake)
    assert not module_cycle_violations(a + b, fake, lazy=False)  # not at import time: only the lazy rule sees it
    other = next(p for p in NO_LAZY_CYCLES if p != package)
    assert not lazy_cycle_violations(a + b, other, fake)


def test_private_rule_catches():
    assert private_violations(_fake("theory.t", "from frcore._x import y"))
    assert private_violations(_fake("theory.t", "from frcore.bank import _b"))
    assert private_violations(_fake("theory.t", "def f():\n    import frcore.bank._b\n"))
    assert private_violations(_fake("experiments.e", "from frcore.bench.cli import _kv"))
    assert not private_violations(_fake("frcore.bench.cli", "from .._x import y\nfrom ..bank import Bank"))
    # a sibling subpackage's private module: frcore.bench reads frcore.bank through its public names
    assert private_violations(_fake("frcore.bench.cli", "from ..bank._b import z"))
    assert private_violations(_fake("frcore.bank.cli", "def f():\n    from frcore.bench._runner import r\n"))
    assert not private_violations(_fake("frcore.bank.cli", "from ._store import Store\nfrom .._params import p"))
    assert not private_violations(_fake("theory.t", "from frcore.bank import Bank\nfrom __future__ import annotations"))
