"""Every name in frcore.__all__ imports, and the public surface the other modules rely on exists."""

from __future__ import annotations

import importlib

import pytest
from support.import_graph import all_imports

import frcore as fr


@pytest.mark.parametrize("name", fr.KERNELS)
def test_kernels_are_public(name):
    assert name in fr.__all__ and callable(getattr(fr, name))


def test_reference_module_exposes_registry_and_python_baseline():
    from frcore import reference

    assert set(reference.REFERENCE) == set(fr.KERNELS)
    assert callable(reference.score_python)


# --- the explicit public API of frcore, frcore.bank and frcore.bench ---------------------------

PACKAGES = ("frcore", "frcore.bank", "frcore.bench")


def _literal_all(package: str) -> list[str]:
    """``__all__`` as written in the package's ``__init__.py`` (a literal list, never computed)."""
    import ast
    from pathlib import Path

    path = Path(importlib.import_module(package).__file__)
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError(f"{package}: no __all__")


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_explicit_and_complete(package):
    mod = importlib.import_module(package)
    written = _literal_all(package)  # raises unless a literal
    assert written == list(mod.__all__)
    assert len(written) == len(set(written)), "duplicates in __all__"
    assert not [n for n in written if not hasattr(mod, n)], "names in __all__ that do not exist"
    # every public name the package imports into its namespace is listed (submodules excepted)
    import types

    public = {n for n, v in vars(mod).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    public -= {"annotations"}
    assert sorted(public - set(written)) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_star_import_is_all(package):
    ns: dict = {}
    exec(f"from {package} import *", ns)
    assert sorted(n for n in ns if n != "__builtins__") == sorted(importlib.import_module(package).__all__)


def test_the_layers_above_use_only_the_public_api():
    """Every name theory/, experiments/ and paper_figures/ take from frcore, frcore.bank or
    frcore.bench is in that package's ``__all__`` (the import contract forbids its private
    modules)."""
    alls = {p: set(importlib.import_module(p).__all__) for p in PACKAGES}
    missing = sorted(
        {
            f"{i.importer}:{i.line}: {i.target}.{n}"
            for i in all_imports()
            if i.target in alls and not i.importer.startswith("frcore")
            for n in i.names
            if n not in alls[i.target]
        }
    )
    assert not missing, "\n".join(missing)
